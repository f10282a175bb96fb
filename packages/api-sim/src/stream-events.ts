import type { ResponseBlock, StopReason } from './build-reply-content.js';
import { estimateTextTokens } from './estimate-tokens.js';
import type { InputUsage } from './prompt-cache.js';

/** One server-sent event, ready to write, with the output tokens it carries (for pacing). */
export type StreamEvent = { name: string; chunk: string; tokens: number };

/** A complete Message as the API returns it. */
export type ResponseMessage = {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  stop_details: null;
  container: null;
  usage: InputUsage & { output_tokens: number; service_tier: 'standard' };
};

function event(name: string, data: unknown, tokens = 0): StreamEvent {
  return { name, chunk: `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`, tokens };
}

/** Splits text into word-sized deltas (at most 32 code points each). */
export function splitText(text: string): string[] {
  return text.match(/\S{1,32}\s*|\s+/gu) ?? [];
}

/** Splits JSON text into at least three pieces (when long enough), at most 16 code points each. */
export function splitJson(json: string): string[] {
  const characters = Array.from(json);
  const size = Math.max(1, Math.min(16, Math.floor(characters.length / 3)));
  const pieces: string[] = [];
  for (let start = 0; start < characters.length; start += size) {
    pieces.push(characters.slice(start, start + size).join(''));
  }
  return pieces;
}

/**
 * The events of a streamed response, in the order the API sends them: `message_start` (with usage),
 * then per block `content_block_start`, its deltas and `content_block_stop` (one `ping` follows the
 * first `content_block_start`, or `message_start` when there is no content), then
 * `message_delta` (stop reason and cumulative usage) and `message_stop`.
 */
export function buildStreamEvents(message: ResponseMessage): StreamEvent[] {
  const events: StreamEvent[] = [
    event('message_start', {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...message.usage, output_tokens: 1 },
      },
    }),
  ];
  const ping = event('ping', { type: 'ping' });
  if (message.content.length === 0) events.push(ping);
  message.content.forEach((block, index) => {
    // As in the API's own streams, the ping follows the first content_block_start.
    const start = (contentBlock: Record<string, unknown>) => {
      events.push(
        event('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: contentBlock,
        }),
      );
      if (index === 0) events.push(ping);
    };
    const delta = (payload: Record<string, unknown>, tokens: number) =>
      event('content_block_delta', { type: 'content_block_delta', index, delta: payload }, tokens);
    switch (block.type) {
      case 'text':
        start({ type: 'text', text: '', citations: null });
        for (const piece of splitText(block.text)) {
          events.push(delta({ type: 'text_delta', text: piece }, estimateTextTokens(piece)));
        }
        break;
      case 'thinking':
        start({ type: 'thinking', thinking: '', signature: '' });
        for (const piece of splitText(block.thinking)) {
          events.push(
            delta({ type: 'thinking_delta', thinking: piece }, estimateTextTokens(piece)),
          );
        }
        events.push(delta({ type: 'signature_delta', signature: block.signature }, 0));
        break;
      case 'tool_use':
        start({ type: 'tool_use', id: block.id, name: block.name, input: {} });
        for (const piece of splitJson(block.partialJson ?? JSON.stringify(block.input))) {
          events.push(
            delta({ type: 'input_json_delta', partial_json: piece }, estimateTextTokens(piece)),
          );
        }
        break;
    }
    events.push(event('content_block_stop', { type: 'content_block_stop', index }));
  });
  const usage = message.usage;
  events.push(
    event('message_delta', {
      type: 'message_delta',
      delta: {
        stop_reason: message.stop_reason,
        stop_sequence: message.stop_sequence,
        stop_details: null,
      },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
      },
    }),
    event('message_stop', { type: 'message_stop' }),
  );
  return events;
}
