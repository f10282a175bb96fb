import type Anthropic from '@anthropic-ai/sdk';
import {
  type AssistantMessage,
  type ContentBlock,
  DelegateError,
  completeUsage,
} from '@delegate/core';

type PartialBlock = ContentBlock & { partialJson?: string };

/** The response being assembled from stream events. */
export type StreamAccumulator = {
  /** The message as far as `message_start` and `message_delta` told. */
  message: AssistantMessage['message'] | undefined;
  /** Content blocks by stream index. */
  blocks: PartialBlock[];
  /** True once `message_stop` arrived. */
  stopped: boolean;
};

/** A new, empty accumulator. */
export function createStreamAccumulator(): StreamAccumulator {
  return { message: undefined, blocks: [], stopped: false };
}

/**
 * Characters of a tool input that is not JSON kept in the conversation. A call cut by
 * `max_tokens` can hold the whole output budget (a long Write): kept whole, it would be resent,
 * and fill the context, on every later turn, though the call never runs.
 */
const KEPT_INVALID_INPUT_CHARS = 2_000;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function parseToolInput(text: string): unknown {
  if (text.length === 0) return {};
  try {
    return JSON.parse(text);
  } catch {
    if (text.length <= KEPT_INVALID_INPUT_CHARS) return { __invalid_json__: text };
    // Never half of a surrogate pair: the API refuses a string that ends in one.
    const end = isHighSurrogate(text.charCodeAt(KEPT_INVALID_INPUT_CHARS - 1))
      ? KEPT_INVALID_INPUT_CHARS - 1
      : KEPT_INVALID_INPUT_CHARS;
    return {
      __invalid_json__: `${text.slice(0, end)}[… ${text.length - end} more characters of this unusable input were removed from the conversation]`,
    };
  }
}

function applyDelta(
  block: PartialBlock,
  delta: Anthropic.RawContentBlockDeltaEvent['delta'],
): void {
  if (delta.type === 'text_delta' && block.type === 'text') block.text += delta.text;
  else if (delta.type === 'input_json_delta' && block.type === 'tool_use')
    block.partialJson = (block.partialJson ?? '') + delta.partial_json;
  else if (delta.type === 'thinking_delta' && block.type === 'thinking')
    block.thinking += delta.thinking;
  else if (delta.type === 'signature_delta' && block.type === 'thinking')
    block.signature += delta.signature;
}

function mergeUsage(
  message: AssistantMessage['message'],
  usage: Anthropic.MessageDeltaUsage,
): AssistantMessage['message']['usage'] {
  const merged = { ...message.usage } as Record<string, unknown>;
  for (const [key, value] of Object.entries(usage)) {
    if (value !== null && value !== undefined) merged[key] = value;
  }
  return completeUsage(merged as AssistantMessage['message']['usage']);
}

/** Folds one stream event into the accumulator. */
export function applyStreamEvent(
  accumulator: StreamAccumulator,
  event: Anthropic.RawMessageStreamEvent,
): void {
  switch (event.type) {
    case 'message_start': {
      const start = event.message;
      accumulator.message = {
        id: start.id,
        role: 'assistant',
        model: start.model,
        content: [],
        stop_reason: start.stop_reason ?? null,
        usage: completeUsage(start.usage),
      };
      return;
    }
    case 'content_block_start': {
      const block = event.content_block as unknown as ContentBlock;
      accumulator.blocks[event.index] =
        block.type === 'tool_use' ? { ...block, input: {}, partialJson: '' } : { ...block };
      return;
    }
    case 'content_block_delta': {
      const block = accumulator.blocks[event.index];
      if (block) applyDelta(block, event.delta);
      return;
    }
    case 'content_block_stop': {
      const block = accumulator.blocks[event.index];
      if (block?.type !== 'tool_use') return;
      block.input = parseToolInput(block.partialJson ?? '');
      delete block.partialJson;
      return;
    }
    case 'message_delta': {
      if (!accumulator.message) return;
      accumulator.message.stop_reason = event.delta.stop_reason ?? accumulator.message.stop_reason;
      accumulator.message.usage = mergeUsage(accumulator.message, event.usage);
      return;
    }
    case 'message_stop':
      accumulator.stopped = true;
      return;
  }
}

function incomplete(message: string): DelegateError {
  return new DelegateError('API_ERROR', message, { details: { streamEndedEarly: true } });
}

// Why a stream that reached `message_stop` still holds no complete response, if it does not.
function malformedEnd(accumulator: StreamAccumulator): string | undefined {
  const open = accumulator.blocks.findIndex(
    (block) => block?.type === 'tool_use' && block.partialJson !== undefined,
  );
  if (open !== -1) {
    return `The response stream ended while tool call block ${open} was still open (no content_block_stop), so its input is incomplete; the call was not run.`;
  }
  if (accumulator.message?.stop_reason === null) {
    return 'The response stream ended without a stop reason (no message_delta), so the response may be incomplete.';
  }
  return undefined;
}

/**
 * The finished response. Throws a retryable `API_ERROR` (details `streamEndedEarly`) when
 * the stream ended before `message_stop`, as a cut connection does, and when it reached
 * `message_stop` incomplete: a tool call block never closed (its input cut off, so it must
 * not run) or no stop reason given.
 */
export function finishStreamAccumulator(
  accumulator: StreamAccumulator,
): AssistantMessage['message'] {
  if (!accumulator.message || !accumulator.stopped) {
    throw incomplete('The response stream ended before message_stop (the connection was cut).');
  }
  const malformed = malformedEnd(accumulator);
  if (malformed !== undefined) throw incomplete(malformed);
  accumulator.message.content = accumulator.blocks.filter(
    (block): block is ContentBlock => block !== undefined,
  );
  return accumulator.message;
}
