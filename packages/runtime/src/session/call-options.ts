import { DelegateError } from '@delegate/core';
import { z } from 'zod';
import { closedObject, isUnknownOptionIssue } from './closed-object.js';

const isFunction = (value: unknown): boolean => typeof value === 'function';
const functionOf = (what: string) =>
  z.custom<(...args: never[]) => unknown>(isFunction, { message: `expected ${what} (a function)` });
const maxTurns = z.number().int().positive();
/** Text a user message carries: the Messages API refuses one that is empty or only whitespace. */
const visibleText = (what: string) =>
  z.string().refine((text) => text.trim() !== '', {
    message: `${what} is empty or only whitespace, which the Messages API refuses; give the text`,
  });

/** What each session method checks its options with, by method name. */
const CALL_OPTIONS = {
  send: closedObject({
    maxTurns: maxTurns.optional(),
    waitForBackground: z.boolean().optional(),
    onEvent: functionOf('an event handler').optional(),
  }),
  run: closedObject({ maxTurns: maxTurns.optional() }),
  forkAfterTurn: closedObject({
    prompt: visibleText('the prompt'),
    label: z.string().optional(),
    querySource: z.string().optional(),
    maxTurns: maxTurns.optional(),
    skipTranscript: z.boolean().optional(),
    skipCacheWrite: z.boolean().optional(),
    onMessage: functionOf('a message handler').optional(),
    onComplete: functionOf('a completion handler').optional(),
  }),
  resumeAgent: closedObject({
    agentId: z.string().min(1),
    sessionId: z.string().min(1).optional(),
    message: visibleText('the message').optional(),
    // Checked by resumeAgent itself, with the error it has always given.
    inFlightToolCalls: z.unknown().optional(),
  }),
  // Only the keys: the method checks `mode` and `results` (an open map of call ids) itself.
  settleInFlightToolCalls: closedObject({
    mode: z.unknown().optional(),
    results: z.unknown().optional(),
  }),
} as const;

/** A session method whose options `checkCallOptions` knows. */
export type SessionCall = keyof typeof CALL_OPTIONS;

function describeIssue(call: SessionCall, issue: z.core.$ZodIssue): string {
  const path = `options${issue.path.map((part) => `.${String(part)}`).join('')}`;
  if (isUnknownOptionIssue(issue)) return `${call}: ${path} ${issue.message}`;
  return `${call}: ${path}: ${issue.message}`;
}

/**
 * Checks the options a session method was given (`undefined` means none), so a wrong type,
 * a turn limit that is not a whole number of 1 or more, or a misspelt key is an
 * `INVALID_ARGUMENT` error naming the option instead of a `TypeError` deep inside a run.
 */
export function checkCallOptions(call: SessionCall, options: unknown): void {
  if (options === undefined && call !== 'forkAfterTurn' && call !== 'resumeAgent') return;
  const parsed = CALL_OPTIONS[call].safeParse(options);
  if (parsed.success) return;
  const issues = parsed.error.issues.slice(0, 3).map((issue) => describeIssue(call, issue));
  throw new DelegateError('INVALID_ARGUMENT', `${issues.join('; ')}.`, {
    details: {
      issues: parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
    },
  });
}

/** Checks that a prompt is a string (empty is allowed: it answers what is waiting). */
export function checkPrompt(call: 'send' | 'run', prompt: unknown): void {
  if (typeof prompt !== 'string')
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${call}: the prompt must be a string (an empty one answers what is waiting), got ${prompt === null ? 'null' : typeof prompt}.`,
    );
  // Sent as it is, it would stay in the conversation and make this and every later request fail.
  if (prompt !== '' && prompt.trim() === '')
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${call}: the prompt holds only whitespace, which the Messages API refuses; give the text, or '' to answer what is waiting.`,
    );
}
