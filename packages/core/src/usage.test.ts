import { describe, expect, it } from 'vitest';
import { addUsage, cacheHitRate, completeUsage, totalInputTokens, totalTokens } from './usage.js';

describe('usage arithmetic', () => {
  const turn1 = {
    input_tokens: 10,
    output_tokens: 5,
    cache_creation_input_tokens: 1000,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 0 },
  };
  const turn2 = { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 1000 };

  it('fills missing fields with zeros', () => {
    expect(completeUsage({ input_tokens: 3, output_tokens: 4 })).toEqual({
      input_tokens: 3,
      output_tokens: 4,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    });
  });

  it('adds usages including the TTL split', () => {
    const sum = addUsage(turn1, turn2);
    expect(sum.input_tokens).toBe(30);
    expect(sum.output_tokens).toBe(12);
    expect(sum.cache_creation_input_tokens).toBe(1000);
    expect(sum.cache_read_input_tokens).toBe(1000);
    expect(sum.cache_creation.ephemeral_5m_input_tokens).toBe(1000);
  });

  it('counts all input and the cache hit rate', () => {
    expect(totalInputTokens(turn1)).toBe(1010);
    expect(totalTokens(turn1)).toBe(1015);
    expect(cacheHitRate(turn2)).toBeCloseTo(1000 / 1020);
    expect(cacheHitRate({ input_tokens: 0, output_tokens: 0 })).toBe(0);
  });
});
