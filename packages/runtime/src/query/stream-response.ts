import type Anthropic from '@anthropic-ai/sdk';
import {
  type AssistantMessage,
  type SystemMessage,
  type ToolUseContext,
  DelegateError,
  createSystemMessage,
  createUuid,
  isAbortError,
} from '@delegate/core';
import { delay } from '../util/delay.js';
import {
  type NormalizedApiError,
  isRetryableRequestError,
  isRetryableStreamError,
  normalizeApiError,
  requestRetryDelayMs,
  retryDelayMs,
} from './retry-policy.js';
import {
  applyStreamEvent,
  createStreamAccumulator,
  finishStreamAccumulator,
} from './stream-accumulator.js';

/** What `streamResponse` needs for one request. */
export type StreamResponseOptions = {
  /** The SDK client. */
  client: Anthropic;
  /** The request body. */
  request: Anthropic.MessageCreateParamsStreaming;
  /** The agent's context (abort signal, agent id and type). */
  context: ToolUseContext;
  /** Where the request comes from, for error messages. */
  querySource: string;
  /** Retries of a stream that fails after it started. */
  maxRetries: number;
  /**
   * Retries of a request refused before its stream began (429, 529, 5xx, no connection);
   * default the client's `maxRetries`. The runtime makes these itself, not the SDK, so that
   * the wait (the server's `retry-after`) is not counted as a silent stream.
   */
  maxRequestRetries?: number;
  /** Milliseconds without an event (headers included) after which the attempt counts as stalled. */
  idleTimeoutMs?: number;
  /** Stalls in a row after which the request fails with `STREAM_STALLED`. */
  maxStalls?: number;
  /**
   * Removes credentials from the text of a failure before it is shown (an error of the HTTP
   * layer can quote a header, the API key with it, as a key with a line break in it does).
   */
  redact?: (text: string) => string;
};

/** Default of `idleTimeoutMs`: 90 seconds without an event. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 90_000;
/** Default of `maxStalls`. */
export const DEFAULT_MAX_CONSECUTIVE_STALLS = 3;

/**
 * The agent type as an HTTP header value: printable ASCII stays as it is, anything else (and
 * `%`) is percent-encoded as UTF-8. A header holds bytes only, so `レビュー係` or an emoji
 * sent as they are made every request of that agent fail before it left the process.
 */
export function agentHeaderValue(agentType: string): string {
  return agentType.replace(/[^\x20-\x24\x26-\x7e]/gu, (character) =>
    Buffer.from(character, 'utf8').reduce(
      (encoded, byte) => `${encoded}%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
      '',
    ),
  );
}

type StreamEvent = { type: 'stream_event'; event: Anthropic.RawMessageStreamEvent };

type Attempt =
  | { kind: 'done'; assistant: AssistantMessage }
  | { kind: 'aborted' }
  | { kind: 'stalled' }
  | { kind: 'failed'; error: unknown; streamStarted: boolean };

/**
 * Aborts an attempt that goes `idleTimeoutMs` without an event; `touch` on every event.
 * One timer per attempt: an event only notes the time, and the timer re-arms itself for
 * what is left of the idle time (streams send hundreds of events).
 */
class StallWatchdog {
  readonly controller = new AbortController();
  stalled = false;
  private lastEventAt = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly idleTimeoutMs: number) {
    this.arm(idleTimeoutMs);
  }

  touch(): void {
    this.lastEventAt = Date.now();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => {
      const idle = Date.now() - this.lastEventAt;
      if (idle < this.idleTimeoutMs) return this.arm(this.idleTimeoutMs - idle);
      this.stalled = true;
      this.controller.abort();
    }, delayMs);
    this.timer.unref();
  }
}

/** Headers of one attempt: the agent's, and how many times the request was sent before. */
function attemptHeaders(
  context: ToolUseContext,
  retryCount: number,
): Record<string, string> | undefined {
  const headers: Record<string, string> = {};
  // Lets a proxy or the simulator tell agents apart; the API ignores it.
  if (context.agentType) headers['x-delegate-agent'] = agentHeaderValue(context.agentType);
  // What the SDK sends when it retries itself (each attempt is a new call to it here).
  if (retryCount > 0) headers['x-stainless-retry-count'] = String(retryCount);
  return Object.keys(headers).length > 0 ? headers : undefined;
}

async function* streamAttempt(
  options: StreamResponseOptions,
  retryCount: number,
): AsyncGenerator<StreamEvent, Attempt> {
  const { context } = options;
  const signal = context.abortController.signal;
  const accumulator = createStreamAccumulator();
  const watchdog = new StallWatchdog(options.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS);
  let streamStarted = false;
  const headers = attemptHeaders(context, retryCount);
  try {
    const {
      data: stream,
      response,
      request_id: requestId,
    } = await options.client.messages
      .create(options.request, {
        // Retried in streamResponse, outside the idle watchdog (see maxRequestRetries).
        maxRetries: 0,
        signal: AbortSignal.any([signal, watchdog.controller.signal]),
        ...(headers ? { headers } : {}),
      })
      .withResponse();
    streamStarted = true;
    watchdog.touch();
    const notAStream = notAnEventStream(response);
    if (notAStream) {
      stream.controller.abort();
      return { kind: 'failed', error: notAStream, streamStarted };
    }
    for await (const event of stream) {
      watchdog.touch();
      applyStreamEvent(accumulator, event);
      yield { type: 'stream_event', event };
      // The response is whole: a server that keeps the connection open after it must not
      // make a finished (and billed) response look stalled. Leaving the loop closes it.
      if (event.type === 'message_stop') break;
    }
    // The SDK ends the iteration quietly on abort; a cut connection looks the same.
    if (signal.aborted) return { kind: 'aborted' };
    if (watchdog.stalled) return { kind: 'stalled' };
    const assistant: AssistantMessage = {
      type: 'assistant',
      uuid: createUuid(),
      timestamp: new Date().toISOString(),
      message: finishStreamAccumulator(accumulator),
      ...(requestId ? { requestId } : {}),
      ...(context.agentId ? { agentId: context.agentId } : {}),
    };
    return { kind: 'done', assistant };
  } catch (error) {
    if (signal.aborted) return { kind: 'aborted' };
    if (watchdog.stalled) return { kind: 'stalled' };
    if (isAbortError(error)) return { kind: 'aborted' };
    return { kind: 'failed', error, streamStarted };
  } finally {
    // Also when the consumer stops early: no timer outlives the attempt.
    watchdog.stop();
  }
}

/**
 * An error for a successful answer that is not an event stream (an HTML page from a proxy or
 * a login portal, a wrong base URL): the SDK would read it as a stream with no event and call
 * it cut short. Undefined for an event stream, or an answer that does not say its type.
 */
function notAnEventStream(response: Response | undefined): DelegateError | undefined {
  const type = response?.headers?.get('content-type');
  if (!type || /^\s*text\/event-stream\b/i.test(type)) return undefined;
  return new DelegateError(
    'API_ERROR',
    `the server answered ${response!.status} with ${type.split(';')[0]!.trim()}, not an event stream (a proxy, a login page, or a base URL that is not the Messages API?)`,
    { details: { status: response!.status, contentType: type } },
  );
}

function stalledError(options: StreamResponseOptions, stalls: number): DelegateError {
  const agent = options.context.agentType ? `agent ${options.context.agentType}` : 'the main agent';
  const idle = options.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
  return new DelegateError(
    'STREAM_STALLED',
    `The Messages API stream of ${agent} (${options.querySource}) stalled ${stalls} times in a row: each time no event arrived for ${idle} ms, so the request was aborted and retried. Check the network or the API status, or raise streamIdleTimeoutMs.`,
    { details: { stalls, idleTimeoutMs: idle, querySource: options.querySource } },
  );
}

/**
 * The failure as it may be shown: its message redacted, and, when that removed anything, a
 * plain error with the redacted message in place of the original (whose message and stack
 * quote the secret).
 */
function redactedFailure(
  options: StreamResponseOptions,
  error: unknown,
  normalized: NormalizedApiError,
): { message: string; cause: unknown } {
  const redact = options.redact;
  if (!redact) return { message: normalized.message, cause: error };
  const message = redact(normalized.message);
  const original = error instanceof Error ? error.message : String(error);
  const causeMessage = redact(original);
  if (message === normalized.message && causeMessage === original) return { message, cause: error };
  const cause = new Error(causeMessage);
  if (error instanceof Error) cause.name = error.name;
  return { message, cause };
}

function apiError(options: StreamResponseOptions, error: unknown, normalized: NormalizedApiError) {
  const agent = options.context.agentType ? `agent ${options.context.agentType}` : 'the main agent';
  const failure = redactedFailure(options, error, normalized);
  return new DelegateError(
    'API_ERROR',
    `The Messages API request of ${agent} (${options.querySource}) failed: ${failure.message}`,
    {
      cause: failure.cause,
      details: {
        status: normalized.status,
        retryAfterMs: normalized.retryAfterMs,
        isNetworkError: normalized.isNetworkError,
        querySource: options.querySource,
      },
    },
  );
}

/**
 * Streams one response, yielding its events. An attempt that goes `idleTimeoutMs` without
 * an event is a stall: it is aborted and sent again, and `maxStalls` stalls in a row throw
 * `STREAM_STALLED` (stalls do not use up `maxRetries`). A request refused before its stream
 * began (429, 529, 5xx, no connection) is sent again up to `maxRequestRetries` times, after
 * the server's `retry-after` (at most 60 s) or 0.5 s doubling to 8 s; a stream that fails
 * after it started (an error event, a cut connection) up to `maxRetries` times, after the
 * hint or a short backoff. Each retry follows an `api_retry` system message, and no wait
 * counts as idle time. A response is complete at its `message_stop`.
 * Returns the assistant message, or undefined when the signal aborted (also during a
 * wait); throws an `API_ERROR` DelegateError with the normalized facts otherwise.
 */
export async function* streamResponse(
  options: StreamResponseOptions,
): AsyncGenerator<StreamEvent | SystemMessage, AssistantMessage | undefined> {
  const signal = options.context.abortController.signal;
  const maxStalls = options.maxStalls ?? DEFAULT_MAX_CONSECUTIVE_STALLS;
  let stalls = 0;
  let requestAttempt = 0;
  for (let attempt = 0; ;) {
    const result = yield* streamAttempt(options, requestAttempt);
    if (result.kind === 'done') return result.assistant;
    if (result.kind === 'aborted') return undefined;
    if (result.kind === 'stalled') {
      stalls++;
      if (stalls >= maxStalls) throw stalledError(options, stalls);
      yield createSystemMessage(
        `The API stream stalled (no event for ${options.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS} ms); retrying (stall ${stalls}/${maxStalls}).`,
        'api_retry',
      );
      continue;
    }
    stalls = 0;
    const normalized = normalizeApiError(result.error);
    const failure = redactedFailure(options, result.error, normalized).message;
    let wait: number;
    if (!result.streamStarted) {
      const limit = options.maxRequestRetries ?? clientRetries(options.client);
      if (requestAttempt >= limit || !isRetryableRequestError(normalized))
        throw apiError(options, result.error, normalized);
      wait = requestRetryDelayMs(requestAttempt, normalized);
      requestAttempt++;
      yield createSystemMessage(
        `The API request failed (${failure}); retrying in ${formatWait(wait)} (${requestAttempt}/${limit}).`,
        'api_retry',
      );
    } else {
      if (attempt >= options.maxRetries || !isRetryableStreamError(normalized))
        throw apiError(options, result.error, normalized);
      wait = retryDelayMs(attempt, normalized);
      attempt++;
      yield createSystemMessage(
        `The API stream failed (${failure}); retrying (${attempt}/${options.maxRetries}).`,
        'api_retry',
      );
    }
    try {
      await delay(wait, { signal });
    } catch {
      return undefined;
    }
  }
}

/** The retries the client was made with (the SDK's default, 2, for a client without). */
function clientRetries(client: Anthropic): number {
  const configured = (client as { maxRetries?: unknown }).maxRetries;
  return typeof configured === 'number' && Number.isInteger(configured) && configured >= 0
    ? configured
    : 2;
}

/** `wait` as `800 ms` or `30 s`. */
function formatWait(wait: number): string {
  return wait < 1_000 ? `${Math.round(wait)} ms` : `${Math.round(wait / 100) / 10} s`;
}
