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
  isRetryableStreamError,
  normalizeApiError,
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
};

type StreamEvent = { type: 'stream_event'; event: Anthropic.RawMessageStreamEvent };

type Attempt =
  | { kind: 'done'; assistant: AssistantMessage }
  | { kind: 'aborted' }
  | { kind: 'failed'; error: unknown; streamStarted: boolean };

async function* streamAttempt(
  options: StreamResponseOptions,
): AsyncGenerator<StreamEvent, Attempt> {
  const { context } = options;
  const signal = context.abortController.signal;
  const accumulator = createStreamAccumulator();
  let streamStarted = false;
  try {
    const { data: stream, request_id: requestId } = await options.client.messages
      .create(options.request, {
        signal,
        // Lets a proxy or the simulator tell agents apart; the API ignores it.
        ...(context.agentType ? { headers: { 'x-delegate-agent': context.agentType } } : {}),
      })
      .withResponse();
    streamStarted = true;
    for await (const event of stream) {
      applyStreamEvent(accumulator, event);
      yield { type: 'stream_event', event };
    }
    // The SDK ends the iteration quietly on abort; a cut connection looks the same.
    if (signal.aborted) return { kind: 'aborted' };
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
    if (signal.aborted || isAbortError(error)) return { kind: 'aborted' };
    return { kind: 'failed', error, streamStarted };
  }
}

function apiError(options: StreamResponseOptions, error: unknown, normalized: NormalizedApiError) {
  const agent = options.context.agentType ? `agent ${options.context.agentType}` : 'the main agent';
  return new DelegateError(
    'API_ERROR',
    `The Messages API request of ${agent} (${options.querySource}) failed: ${normalized.message}`,
    {
      cause: error,
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
 * Streams one response, yielding its events. HTTP-level failures were already retried by
 * the SDK; a stream that fails after it started (an error event, a cut connection) is
 * retried here up to `maxRetries` times, after the server's `retry-after` hint when it
 * sent one, else a short backoff, with an `api_retry` system message before each retry.
 * Returns the assistant message, or undefined when the signal aborted (also during a
 * wait); throws an `API_ERROR` DelegateError with the normalized facts otherwise.
 */
export async function* streamResponse(
  options: StreamResponseOptions,
): AsyncGenerator<StreamEvent | SystemMessage, AssistantMessage | undefined> {
  const signal = options.context.abortController.signal;
  for (let attempt = 0; ; attempt++) {
    const result = yield* streamAttempt(options);
    if (result.kind === 'done') return result.assistant;
    if (result.kind === 'aborted') return undefined;
    const normalized = normalizeApiError(result.error);
    const retryable =
      result.streamStarted && attempt < options.maxRetries && isRetryableStreamError(normalized);
    if (!retryable) throw apiError(options, result.error, normalized);
    yield createSystemMessage(
      `The API stream failed (${normalized.message}); retrying (${attempt + 1}/${options.maxRetries}).`,
      'api_retry',
    );
    try {
      await delay(retryDelayMs(attempt, normalized), { signal });
    } catch {
      return undefined;
    }
  }
}
