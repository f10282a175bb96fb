import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildReplyContent } from './build-reply-content.js';

const options = {
  stopSequences: [],
  thinkingEnabled: true,
  toolUseId: (index: number) => `toolu_${index}`,
  sign: (thinking: string) => `sig:${thinking.length}`,
};

describe('buildReplyContent', () => {
  it('never reports more output tokens than max_tokens allows', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.integer({ min: 1, max: 50 }),
        (text, maxTokens) => {
          const built = buildReplyContent(text, { ...options, maxTokens });
          expect(built.outputTokens).toBeLessThanOrEqual(Math.max(1, maxTokens));
          const kept = built.content[0]?.type === 'text' ? built.content[0].text : '';
          expect(text.startsWith(kept)).toBe(true);
          expect(built.stopReason).toBe(kept === text ? 'end_turn' : 'max_tokens');
        },
      ),
    );
  });

  it('drops a tool call that does not fit and stops with max_tokens', () => {
    const built = buildReplyContent(
      [
        { type: 'text', text: 'ok' },
        { type: 'tool_use', name: 'Write', input: { content: 'x'.repeat(400) } },
      ],
      { ...options, maxTokens: 20 },
    );
    expect(built.content.map((block) => block.type)).toEqual(['text']);
    expect(built.stopReason).toBe('max_tokens');
  });

  it('sends a tool call that does not fit cut, when asked to, and stops with max_tokens', () => {
    const input = { content: 'x'.repeat(400) };
    const built = buildReplyContent([{ type: 'tool_use', name: 'Write', input }], {
      ...options,
      maxTokens: 20,
      cutToolCalls: true,
    });
    expect(built.stopReason).toBe('max_tokens');
    const [block] = built.content;
    expect(block?.type === 'tool_use' && block.partialJson).toBe(
      JSON.stringify(input).slice(0, 20 * 4 - 'Write'.length),
    );
    expect(built.outputTokens).toBe(20);
  });

  it('reports tool_use when the content calls a tool, with generated ids and signatures', () => {
    const built = buildReplyContent(
      [
        { type: 'thinking', thinking: 'hmm' },
        { type: 'tool_use', name: 'Read', input: {} },
      ],
      { ...options, maxTokens: 100 },
    );
    expect(built.stopReason).toBe('tool_use');
    expect(built.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig:3' },
      { type: 'tool_use', id: 'toolu_1', name: 'Read', input: {} },
    ]);
  });
});
