import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flattenPrefix } from './flatten-prefix.js';
import { validateMessagesRequest } from './validate-request.js';

type Parts = { tools: string[]; system: string[]; messages: string[]; budget: number };

function request(parts: Parts, extra: Record<string, unknown> = {}) {
  return validateMessagesRequest(
    {
      model: 'claude-sonnet-5',
      max_tokens: 10_000,
      tools: parts.tools.map((description, index) => ({
        name: `tool${index}`,
        description,
        input_schema: { type: 'object' },
      })),
      system: parts.system.map((text) => ({ type: 'text', text })),
      thinking: { type: 'enabled', budget_tokens: parts.budget },
      messages: parts.messages.map((text, index) => ({
        role: index % 2 === 0 ? 'user' : 'assistant',
        content: text,
      })),
      ...extra,
    },
    { requireMaxTokens: true },
  );
}

const word = fc.string({ minLength: 1, maxLength: 12 }).filter((text) => text.trim().length > 0);
const parts = fc.record({
  tools: fc.array(word, { minLength: 1, maxLength: 4 }),
  system: fc.array(word, { minLength: 1, maxLength: 3 }),
  messages: fc
    .array(word, { minLength: 1, maxLength: 5 })
    .map((list) => (list.length % 2 === 0 ? list.slice(0, -1) : list)),
  budget: fc.integer({ min: 1024, max: 5000 }),
});

const hashes = (value: Parts) => flattenPrefix(request(value)).blocks.map((block) => block.hash);

describe('flattenPrefix', () => {
  it('orders blocks tools → system → messages with cumulative tokens', () => {
    fc.assert(
      fc.property(parts, (value) => {
        const { blocks, totalTokens } = flattenPrefix(request(value));
        expect(blocks.map((block) => block.part)).toEqual([
          ...value.tools.map(() => 'tools'),
          ...value.system.map(() => 'system'),
          ...value.messages.map(() => 'messages'),
        ]);
        expect(blocks.at(-1)?.cumulativeTokens).toBe(totalTokens);
        expect(blocks.reduce((sum, block) => sum + block.tokens, 0)).toBe(totalTokens);
      }),
    );
  });

  it('changes every key when a tool changes', () => {
    fc.assert(
      fc.property(parts, word, (value, suffix) => {
        const changed = {
          ...value,
          tools: [...value.tools.slice(0, -1), `${value.tools.at(-1)}${suffix}`],
        };
        const before = hashes(value);
        const after = hashes(changed);
        const firstChanged = value.tools.length - 1;
        before.forEach((hash, position) => {
          if (position < firstChanged) expect(after[position]).toBe(hash);
          else expect(after[position]).not.toBe(hash);
        });
      }),
    );
  });

  it('keeps tool keys but changes system and message keys when the system changes', () => {
    fc.assert(
      fc.property(parts, word, (value, suffix) => {
        const before = hashes(value);
        const after = hashes({
          ...value,
          system: [`${value.system[0]}${suffix}`, ...value.system.slice(1)],
        });
        before.forEach((hash, position) => {
          if (position < value.tools.length) expect(after[position]).toBe(hash);
          else expect(after[position]).not.toBe(hash);
        });
      }),
    );
  });

  it('changes only message keys when the thinking config changes', () => {
    fc.assert(
      fc.property(parts, (value) => {
        const before = hashes(value);
        const after = hashes({ ...value, budget: value.budget + 1 });
        const firstMessage = value.tools.length + value.system.length;
        before.forEach((hash, position) => {
          if (position < firstMessage) expect(after[position]).toBe(hash);
          else expect(after[position]).not.toBe(hash);
        });
      }),
    );
  });

  it('ignores where cache_control sits, and marks the last block for the automatic marker', () => {
    fc.assert(
      fc.property(parts, (value) => {
        const marked = flattenPrefix(
          request(value, { cache_control: { type: 'ephemeral', ttl: '1h' } }),
        );
        expect(marked.blocks.map((block) => block.hash)).toEqual(hashes(value));
        expect(marked.blocks.at(-1)?.breakpoint).toEqual({ ttl: '1h', automatic: true });
        expect(marked.blocks.filter((block) => block.breakpoint).length).toBe(1);
      }),
    );
  });
});
