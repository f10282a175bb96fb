import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  TOKEN_OVERHEAD,
  estimateBlockTokens,
  estimateTextTokens,
  estimateToolTokens,
} from './estimate-tokens.js';

describe('estimateTextTokens', () => {
  it('is ceil(utf8 bytes / 4)', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('abcd')).toBe(1);
    expect(estimateTextTokens('abcde')).toBe(2);
    expect(estimateTextTokens('é')).toBe(1);
    expect(estimateTextTokens('😀😀')).toBe(2);
  });

  it('is nearly additive over concatenation', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (left, right) => {
        const joined = estimateTextTokens(left + right);
        const separate = estimateTextTokens(left) + estimateTextTokens(right);
        expect(joined).toBeLessThanOrEqual(separate);
        expect(separate - joined).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('estimateBlockTokens and estimateToolTokens', () => {
  it('add the fixed overheads and ignore cache_control', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (text) => {
        const plain = estimateBlockTokens({ type: 'text', text });
        expect(plain).toBe(estimateTextTokens(text) + TOKEN_OVERHEAD.block);
        expect(
          estimateBlockTokens({
            type: 'text',
            text,
            cache_control: { type: 'ephemeral', ttl: '1h' },
          }),
        ).toBe(plain);
      }),
    );
    const tool = { name: 'Read', description: 'Read a file', input_schema: { type: 'object' } };
    expect(estimateToolTokens({ ...tool, cache_control: { type: 'ephemeral' } })).toBe(
      estimateToolTokens(tool),
    );
    expect(estimateBlockTokens({ type: 'image', source: {} })).toBe(TOKEN_OVERHEAD.image);
  });
});
