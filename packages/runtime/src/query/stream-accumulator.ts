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
  /** Characters of text, thinking, signature and tool input received so far. */
  chars: number;
};

/** A new, empty accumulator. */
export function createStreamAccumulator(): StreamAccumulator {
  return { message: undefined, blocks: [], stopped: false, chars: 0 };
}

/**
 * Characters one response may carry (text, thinking and tool input together). The largest
 * output budget the API grants is 128k tokens, a few hundred thousand characters; a stream far
 * past this comes from a broken proxy or server, and would otherwise be held in memory until
 * the process runs out of it.
 */
export const MAX_RESPONSE_CHARS = 16 * 1024 * 1024;

/** Content blocks one response may open; the API opens one per text, thinking or tool call. */
export const MAX_RESPONSE_BLOCKS = 4_096;

function malformed(message: string, details: Record<string, unknown> = {}): DelegateError {
  return new DelegateError('API_ERROR', message, {
    details: { malformedResponse: true, ...details },
  });
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

// The characters a delta adds, or 0 for one that does not fit its block (it is ignored).
function deltaChars(block: PartialBlock, delta: Anthropic.RawContentBlockDeltaEvent['delta']) {
  if (delta.type === 'text_delta' && block.type === 'text') return delta.text.length;
  if (delta.type === 'input_json_delta' && block.type === 'tool_use')
    return delta.partial_json.length;
  if (delta.type === 'thinking_delta' && block.type === 'thinking') return delta.thinking.length;
  if (delta.type === 'signature_delta' && block.type === 'thinking') return delta.signature.length;
  return 0;
}

function applyDelta(
  accumulator: StreamAccumulator,
  block: PartialBlock,
  delta: Anthropic.RawContentBlockDeltaEvent['delta'],
): void {
  accumulator.chars += deltaChars(block, delta);
  if (accumulator.chars > MAX_RESPONSE_CHARS) {
    throw malformed(
      `The response stream carried more than ${MAX_RESPONSE_CHARS.toLocaleString('en-US')} characters without ending, far past any output budget of the API; it was refused (a broken proxy or server?).`,
      { chars: accumulator.chars },
    );
  }
  if (delta.type === 'text_delta' && block.type === 'text') block.text += delta.text;
  else if (delta.type === 'input_json_delta' && block.type === 'tool_use')
    block.partialJson = (block.partialJson ?? '') + delta.partial_json;
  else if (delta.type === 'thinking_delta' && block.type === 'thinking')
    block.thinking += delta.thinking;
  else if (delta.type === 'signature_delta' && block.type === 'thinking')
    block.signature += delta.signature;
}

/**
 * The stream index of a new block: the API numbers blocks 0, 1, 2… in order. Any other index
 * (a gap, a negative or fractional one, one past {@link MAX_RESPONSE_BLOCKS}) is refused:
 * a huge one would make a sparse array that every later scan walks index by index.
 */
function newBlockIndex(accumulator: StreamAccumulator, index: unknown): number {
  const next = accumulator.blocks.length;
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > next) {
    throw malformed(
      `The response stream opened content block ${String(index)} where block ${next} was next; the response is malformed and was refused.`,
      { index },
    );
  }
  if (index >= MAX_RESPONSE_BLOCKS) {
    throw malformed(
      `The response stream opened more than ${MAX_RESPONSE_BLOCKS} content blocks; it was refused (a broken proxy or server?).`,
      { index },
    );
  }
  return index;
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
      accumulator.blocks[newBlockIndex(accumulator, event.index)] =
        block.type === 'tool_use' ? { ...block, input: {}, partialJson: '' } : { ...block };
      return;
    }
    case 'content_block_delta': {
      const block = accumulator.blocks[event.index];
      if (block) applyDelta(accumulator, block, event.delta);
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
