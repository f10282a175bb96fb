import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICE_TABLE, costOfUsage, findModelPrice } from './pricing.js';

describe('price table', () => {
  it('finds a model by exact id, by the longest prefix, then by family', () => {
    expect(findModelPrice('claude-opus-4-1-20250805')).toEqual(
      DEFAULT_PRICE_TABLE['claude-opus-4-1'],
    );
    expect(findModelPrice('claude-opus-5-5')).toEqual(DEFAULT_PRICE_TABLE['opus']);
    expect(findModelPrice('Sonnet')).toEqual(DEFAULT_PRICE_TABLE['sonnet']);
    expect(findModelPrice('gpt-9')).toBeUndefined();
  });

  it('bills every usage field at its own price', () => {
    const { costUsd, priced } = costOfUsage(
      {
        input_tokens: 1_000_000,
        output_tokens: 1_000_000,
        cache_read_input_tokens: 1_000_000,
        cache_creation_input_tokens: 3_000_000,
        cache_creation: {
          ephemeral_5m_input_tokens: 2_000_000,
          ephemeral_1h_input_tokens: 1_000_000,
        },
      },
      'claude-sonnet-5-5',
    );
    expect(priced).toBe(true);
    // 3 in + 15 out + 0.3 read + 2 × 3.75 (5 min) + 6 (1 h)
    expect(costUsd).toBeCloseTo(3 + 15 + 0.3 + 7.5 + 6, 10);
  });

  it('counts cache writes without a TTL split as 5-minute writes', () => {
    const { costUsd } = costOfUsage(
      { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 1_000_000 },
      'haiku',
    );
    expect(costUsd).toBeCloseTo(1.25, 10);
  });

  it('takes a caller table and says when a model has no price', () => {
    const table = {
      mine: {
        inputPerMTok: 1,
        outputPerMTok: 2,
        cacheWrite5mPerMTok: 0,
        cacheWrite1hPerMTok: 0,
        cacheReadPerMTok: 0,
      },
    };
    expect(
      costOfUsage({ input_tokens: 500_000, output_tokens: 500_000 }, 'mine', table).costUsd,
    ).toBeCloseTo(1.5, 10);
    expect(costOfUsage({ input_tokens: 10, output_tokens: 10 }, 'sonnet', table)).toEqual({
      costUsd: 0,
      priced: false,
    });
  });
});
