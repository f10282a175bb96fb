import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildStreamEvents, splitJson, splitText, type ResponseMessage } from './stream-events.js';

describe('splitText and splitJson', () => {
  it('split without losing or reordering characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        expect(splitText(text).join('')).toBe(text);
        expect(splitJson(text).join('')).toBe(text);
      }),
    );
  });

  it('split JSON of three or more characters into at least three pieces', () => {
    fc.assert(
      fc.property(fc.json(), (json) => {
        fc.pre(Array.from(json).length >= 3);
        expect(splitJson(json).length).toBeGreaterThanOrEqual(3);
      }),
    );
  });
});

describe('buildStreamEvents', () => {
  const message = (content: ResponseMessage['content']): ResponseMessage => ({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-5',
    content,
    stop_reason: 'tool_use',
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: {
      input_tokens: 10,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 30,
      cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 0 },
      output_tokens: 42,
      service_tier: 'standard',
    },
  });
  const parse = (events: ReturnType<typeof buildStreamEvents>) =>
    events.map((item) => {
      const [nameLine, dataLine] = item.chunk.split('\n');
      return {
        name: nameLine?.slice('event: '.length),
        data: JSON.parse(dataLine?.slice('data: '.length) ?? '{}') as Record<string, unknown>,
      };
    });

  it('orders events as the API does, with the ping after the first content_block_start', () => {
    const events = parse(
      buildStreamEvents(
        message([
          { type: 'thinking', thinking: 'Plan it.', signature: 'c2ln' },
          { type: 'text', text: 'Reading.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { path: 'a' } },
        ]),
      ),
    );
    const names = events.map((item) => item.name);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.filter((name) => name === 'ping')).toHaveLength(1);
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    // Every delta and stop carries the index of the block opened last.
    let open = -1;
    for (const { name, data } of events) {
      if (name === 'content_block_start') {
        expect(data.index).toBe(open + 1);
        open = data.index as number;
      }
      if (name === 'content_block_delta' || name === 'content_block_stop') {
        expect(data.index).toBe(open);
      }
    }
    expect(open).toBe(2);
    const thinkingDeltas = events
      .filter((item) => item.name === 'content_block_delta' && item.data.index === 0)
      .map((item) => (item.data.delta as { type: string }).type);
    expect(thinkingDeltas.at(-1)).toBe('signature_delta');
    expect(thinkingDeltas.filter((type) => type === 'signature_delta')).toHaveLength(1);
    // message_start reports the input side; message_delta repeats it and the final output count.
    const start = events[0]?.data.message as { usage: Record<string, unknown> };
    expect(start.usage).toMatchObject({
      input_tokens: 10,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 30,
    });
    expect(events.at(-2)?.data.usage).toMatchObject({
      input_tokens: 10,
      cache_creation_input_tokens: 20,
      cache_read_input_tokens: 30,
      output_tokens: 42,
    });
  });

  it('sends the ping after message_start when there is no content', () => {
    const names = parse(buildStreamEvents(message([]))).map((item) => item.name);
    expect(names).toEqual(['message_start', 'ping', 'message_delta', 'message_stop']);
  });

  it('streams tool input whose chunks rebuild the exact input, escapes and astral characters included', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue()), (input) => {
        const events = parse(
          buildStreamEvents(message([{ type: 'tool_use', id: 'toolu_1', name: 'X', input }])),
        );
        const json = events
          .filter((item) => item.name === 'content_block_delta')
          .map((item) => (item.data.delta as { partial_json: string }).partial_json)
          .join('');
        // The chunks must rebuild exactly what JSON can carry (JSON has no -0).
        expect(json).toBe(JSON.stringify(input));
      }),
    );
  });
});
