import { DelegateError, MAX_TIMER_MS, invalidArgument, isObject } from '@delegate/core';
import { MIN_SECRET_LENGTH } from '../util/redact-secrets.js';
import { checkKnownKeys } from '../util/unknown-option.js';
import type { QueryParams } from './query.js';

// Every key `QueryParams` has, and no other (`satisfies` keeps the two in step): any other
// key is refused, so a misspelt option is not silently left out.
const QUERY_PARAMS_KEYS = Object.keys({
  client: true,
  messages: true,
  systemPrompt: true,
  userContext: true,
  systemContext: true,
  toolUseContext: true,
  canUseTool: true,
  maxTurns: true,
  maxOutputTokensOverride: true,
  querySource: true,
  thinking: true,
  effort: true,
  skipCacheWrite: true,
  drainQueuedMessages: true,
  maxToolConcurrency: true,
  maxToolResultChars: true,
  toolDefinitions: true,
  maxStreamRetries: true,
  streamIdleTimeoutMs: true,
  maxConsecutiveStalls: true,
  toolHooks: true,
  secrets: true,
  forkLayout: true,
  usageGuard: true,
  requestGate: true,
} satisfies Record<keyof QueryParams, true>);
const TOOL_HOOKS_KEYS = ['beforeToolCall', 'afterToolCall'] as const;
const THINKING =
  "{ type: 'disabled' }, { type: 'adaptive' } or { type: 'enabled', budgetTokens: a whole number of 1 or more }";

const OPTIONAL_FUNCTIONS = ['drainQueuedMessages', 'requestGate'] as const;
const OPTIONAL_COUNTS = [
  'maxTurns',
  'maxOutputTokensOverride',
  'maxToolConcurrency',
  'maxToolResultChars',
  'maxStreamRetries',
  'streamIdleTimeoutMs',
  'maxConsecutiveStalls',
] as const;

function invalid(option: string, expected: string, value: unknown): Error {
  return invalidArgument({ where: 'query()', option, expected, value });
}

/** Throws for the first key of `value` (the object at `option`) outside `known`, naming its path. */
function checkQueryKeys(
  option: string,
  value: Record<string, unknown>,
  known: readonly string[],
  listedIn?: string,
): void {
  checkKnownKeys({ where: 'query()', option, value, known, ...(listedIn ? { listedIn } : {}) });
}

/**
 * Throws a DelegateError (INVALID_ARGUMENT) naming the first option of `query` that is
 * missing or of the wrong kind, so a caller outside TypeScript learns which one instead of
 * meeting a TypeError deep in the loop. Checks shapes only, once per call, never per turn.
 */
export function checkQueryParams(params: unknown): void {
  if (!isObject(params)) {
    throw invalid(
      'params',
      'an object ({ client, messages, systemPrompt, toolUseContext, canUseTool, querySource })',
      params,
    );
  }
  checkQueryKeys('params', params, QUERY_PARAMS_KEYS, 'QueryParams');
  checkRequired(params);
  checkOptional(params);
  checkObjectOptions(params);
}

/** The options `query` cannot run without. */
function checkRequired(params: Record<string, unknown>): void {
  if (!isObject(params['client'])) {
    throw invalid('params.client', 'an Anthropic SDK client', params['client']);
  }
  if (!Array.isArray(params['messages'])) {
    throw invalid('params.messages', 'an array of messages (empty for none)', params['messages']);
  }
  if (!Array.isArray(params['systemPrompt'])) {
    throw invalid('params.systemPrompt', 'an array of strings', params['systemPrompt']);
  }
  const context = params['toolUseContext'];
  if (!isObject(context)) {
    throw invalid('params.toolUseContext', "the agent's ToolUseContext", context);
  }
  if (!isObject(context['options'])) {
    throw invalid('params.toolUseContext.options', 'an object', context['options']);
  }
  if (!isObject(context['abortController'])) {
    throw invalid(
      'params.toolUseContext.abortController',
      'an AbortController',
      context['abortController'],
    );
  }
  if (typeof params['canUseTool'] !== 'function') {
    throw invalid('params.canUseTool', 'a function', params['canUseTool']);
  }
  if (typeof params['querySource'] !== 'string') {
    throw invalid('params.querySource', 'a string', params['querySource']);
  }
}

/** The optional functions, counts and secrets. */
function checkOptional(params: Record<string, unknown>): void {
  for (const name of OPTIONAL_FUNCTIONS) {
    const value = params[name];
    if (value !== undefined && typeof value !== 'function') {
      throw invalid(`params.${name}`, 'a function', value);
    }
  }
  for (const name of OPTIONAL_COUNTS) {
    const value = params[name];
    if (value !== undefined && (typeof value !== 'number' || Number.isNaN(value) || value < 0)) {
      throw invalid(`params.${name}`, 'a number of 0 or more', value);
    }
  }
  checkSecrets(params['secrets']);
  // The stall watchdog's timer: Node runs a longer one (or Infinity) after 1 ms.
  const idle = params['streamIdleTimeoutMs'];
  if (typeof idle === 'number' && !(idle <= MAX_TIMER_MS)) {
    throw invalid(
      'params.streamIdleTimeoutMs',
      `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps)`,
      idle,
    );
  }
}

/**
 * The object-valued options: `thinking` (also the context's, which `query` falls back to) and
 * `toolHooks` take only their own keys; `userContext` and `systemContext` are open maps of
 * texts; `usageGuard` needs its two methods (an implementation may have more members);
 * `toolDefinitions` go to the API as given.
 */
function checkObjectOptions(params: Record<string, unknown>): void {
  checkThinking('params.thinking', params['thinking']);
  const context = params['toolUseContext'] as Record<string, unknown>;
  checkThinking(
    'params.toolUseContext.options.thinking',
    (context['options'] as Record<string, unknown>)['thinking'],
  );
  checkTexts('params.userContext', params['userContext']);
  checkTexts('params.systemContext', params['systemContext']);
  checkToolHooks(params['toolHooks']);
  checkUsageGuard(params['usageGuard']);
  const definitions = params['toolDefinitions'];
  if (definitions !== undefined && !Array.isArray(definitions)) {
    throw invalid('params.toolDefinitions', 'an array of tool definitions', definitions);
  }
}

/** A `ThinkingConfig`: one of three shapes, each with only its own keys. */
function checkThinking(option: string, thinking: unknown): void {
  if (thinking === undefined) return;
  if (!isObject(thinking)) throw invalid(option, THINKING, thinking);
  const { type } = thinking;
  if (type !== 'disabled' && type !== 'adaptive' && type !== 'enabled') {
    throw invalid(`${option}.type`, `'disabled', 'adaptive' or 'enabled' (${THINKING})`, type);
  }
  checkQueryKeys(option, thinking, type === 'enabled' ? ['type', 'budgetTokens'] : ['type']);
  const budget = thinking['budgetTokens'];
  if (type === 'enabled' && !(Number.isInteger(budget) && (budget as number) >= 1)) {
    throw invalid(
      `${option}.budgetTokens`,
      'a whole number of tokens, 1 or more (a request sends at least 1024)',
      budget,
    );
  }
}

/** An open map of names to texts (`userContext`, `systemContext`). */
function checkTexts(option: string, value: unknown): void {
  if (value === undefined) return;
  if (!isObject(value)) throw invalid(option, 'an object of texts by name', value);
  for (const [name, text] of Object.entries(value)) {
    if (typeof text !== 'string') throw invalid(`${option}.${name}`, 'a string', text);
  }
}

/** `toolHooks`: `beforeToolCall` and `afterToolCall`, both optional functions, nothing else. */
function checkToolHooks(hooks: unknown): void {
  if (hooks === undefined) return;
  if (!isObject(hooks))
    throw invalid('params.toolHooks', 'an object ({ beforeToolCall, afterToolCall })', hooks);
  checkQueryKeys('params.toolHooks', hooks, TOOL_HOOKS_KEYS);
  for (const name of TOOL_HOOKS_KEYS) {
    const hook = hooks[name];
    if (hook !== undefined && typeof hook !== 'function') {
      throw invalid(`params.toolHooks.${name}`, 'a function', hook);
    }
  }
}

/** `usageGuard`: an object with `ensureBudget` and `recordResponse`. */
function checkUsageGuard(guard: unknown): void {
  if (guard === undefined) return;
  if (typeof guard !== 'object' || guard === null) {
    throw invalid('params.usageGuard', 'a UsageGuard ({ ensureBudget, recordResponse })', guard);
  }
  for (const name of ['ensureBudget', 'recordResponse'] as const) {
    const method = (guard as Record<string, unknown>)[name];
    if (typeof method !== 'function')
      throw invalid(`params.usageGuard.${name}`, 'a function', method);
  }
}

/** `secrets`: strings long enough to redact. Never shows a value: it is a secret. */
function checkSecrets(secrets: unknown): void {
  if (secrets === undefined) return;
  const refuse = (option: string, problem: string): never => {
    throw new DelegateError('INVALID_ARGUMENT', `query(): ${option} ${problem}.`, {
      details: { option },
    });
  };
  if (!Array.isArray(secrets)) refuse('params.secrets', 'must be an array of strings');
  (secrets as unknown[]).forEach((secret, index) => {
    if (typeof secret !== 'string') refuse(`params.secrets[${index}]`, 'must be a string');
    else if (secret.length < MIN_SECRET_LENGTH)
      refuse(
        `params.secrets[${index}]`,
        `must be ${MIN_SECRET_LENGTH} characters or longer: a value that short cannot be redacted without mangling ordinary text (use a longer secret, or leave it out)`,
      );
  });
}
