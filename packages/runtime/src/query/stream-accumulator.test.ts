import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import {
  MAX_RESPONSE_BLOCKS,
  MAX_RESPONSE_CHARS,
  applyStreamEvent,
  createStreamAccumulator,
  finishStreamAccumulator,
} from './stream-accumulator.js';

const start = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  },
} as unknown as Anthropic.RawMessageStreamEvent;

function events(list: unknown[]): Anthropic.RawMessageStreamEvent[] {
  return list as Anthropic.RawMessageStreamEvent[];
}

/** What finishing the accumulator throws (a test failure when it throws nothing). */
function finishError(accumulator: ReturnType<typeof createStreamAccumulator>): DelegateError {
  try {
    finishStreamAccumulator(accumulator);
  } catch (error) {
    return error as DelegateError;
  }
  throw new Error('expected finishStreamAccumulator to throw');
}

describe('the stream accumulator', () => {
  it('assembles text, tool input JSON and usage from the events', () => {
    const accumulator = createStreamAccumulator();
    for (const event of events([
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 't1', name: 'Read', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"file_' },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: 'path":"a"}' },
      },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 7 } },
      { type: 'message_stop' },
    ]))
      applyStreamEvent(accumulator, event);
    const message = finishStreamAccumulator(accumulator);
    expect(message.content).toEqual([
      { type: 'text', text: 'Hello' },
      { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'a' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 10, output_tokens: 7 });
  });

  /** The input a streamed tool call ends with when its JSON text is `partial`. */
  const toolInputOf = (partial: string): unknown => {
    const accumulator = createStreamAccumulator();
    for (const event of events([
      start,
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 't1', name: 'Write', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: partial },
      },
      { type: 'content_block_stop', index: 0 },
      // A call cut by the output limit: the block closes, then the stop reason comes.
      { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]))
      applyStreamEvent(accumulator, event);
    const block = finishStreamAccumulator(accumulator).content[0];
    return block?.type === 'tool_use' ? block.input : undefined;
  };

  it('keeps tool input that is not JSON instead of throwing', () => {
    expect(toolInputOf('{"cut')).toEqual({ __invalid_json__: '{"cut' });
  });

  it('keeps the first 2,000 characters of an input that is not JSON, never half a surrogate pair', () => {
    const inputOf = (partial: string): unknown =>
      (toolInputOf(partial) as { __invalid_json__: string }).__invalid_json__;
    const exact = `{"c": "${'x'.repeat(1_993)}`;
    expect(exact).toHaveLength(2_000);
    expect(inputOf(exact)).toBe(exact);
    expect(inputOf(`${exact}y`)).toBe(
      `${exact}[… 1 more characters of this unusable input were removed from the conversation]`,
    );
    // An emoji (two UTF-16 units) across the limit is left out whole.
    const emoji = `{"c": "${'x'.repeat(1_992)}😀😀`;
    const kept = inputOf(emoji) as string;
    expect(kept.startsWith(`{"c": "${'x'.repeat(1_992)}[… 4 more`)).toBe(true);
    expect(kept).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it('refuses a block opened out of order, whatever its index', () => {
    for (const index of [1, -1, 0.5, 2 ** 32, '0', null]) {
      const accumulator = createStreamAccumulator();
      applyStreamEvent(accumulator, start);
      expect(() =>
        applyStreamEvent(accumulator, {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        } as unknown as Anthropic.RawMessageStreamEvent),
      ).toThrow(
        expect.objectContaining({
          code: 'API_ERROR',
          message: expect.stringContaining(`opened content block ${String(index)} where block 0`),
          details: expect.objectContaining({ malformedResponse: true }),
        }),
      );
      expect(accumulator.blocks).toEqual([]);
    }
  });

  it('refuses a response with more blocks or characters than any real one', () => {
    const many = createStreamAccumulator();
    applyStreamEvent(many, start);
    const open = (index: number) =>
      applyStreamEvent(many, {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      } as Anthropic.RawMessageStreamEvent);
    for (let index = 0; index < MAX_RESPONSE_BLOCKS; index++) open(index);
    expect(() => open(MAX_RESPONSE_BLOCKS)).toThrow(/more than 4096 content blocks/);

    const long = createStreamAccumulator();
    for (const event of events([
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ]))
      applyStreamEvent(long, event);
    const delta = (text: string) =>
      applyStreamEvent(long, {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text },
      } as Anthropic.RawMessageStreamEvent);
    delta('x'.repeat(MAX_RESPONSE_CHARS));
    expect(() => delta('y')).toThrow(/more than 16,777,216 characters without ending/);
  });

  it('refuses a stream that ended before message_stop, as a retryable cut', () => {
    const accumulator = createStreamAccumulator();
    applyStreamEvent(accumulator, start);
    const error = finishError(accumulator);
    expect(DelegateError.hasCode(error, 'API_ERROR')).toBe(true);
    expect(error.details?.['streamEndedEarly']).toBe(true);
  });

  it('refuses a stream that stops with a tool call still open, or with no stop reason', () => {
    const toolStart = {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 't1', name: 'Cleanup', input: {} },
    };
    const cut = {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '{"path": "build/tm' },
    };
    const delta = {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use' },
      usage: { output_tokens: 5 },
    };
    const cases: Array<[unknown[], RegExp]> = [
      [
        [start, toolStart, cut, delta, { type: 'message_stop' }],
        /tool call block 0 was still open/,
      ],
      [
        [start, toolStart, cut, { type: 'content_block_stop', index: 0 }, { type: 'message_stop' }],
        /without a stop reason/,
      ],
    ];
    for (const [list, message] of cases) {
      const accumulator = createStreamAccumulator();
      for (const event of events(list)) applyStreamEvent(accumulator, event);
      const error = finishError(accumulator);
      expect(DelegateError.hasCode(error, 'API_ERROR')).toBe(true);
      expect(error.message).toMatch(message);
      expect(error.details?.['streamEndedEarly']).toBe(true);
    }
  });
});
