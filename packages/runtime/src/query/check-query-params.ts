import { DelegateError, MAX_TIMER_MS, invalidArgument, isObject } from '@delegate/core';
import { MIN_SECRET_LENGTH } from '../util/redact-secrets.js';

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
