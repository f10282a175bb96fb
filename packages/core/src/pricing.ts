import { z } from 'zod';
import { type Usage, completeUsage } from './usage.js';

/** What one model costs, in US dollars per million tokens. */
export const ModelPrice = z.object({
  /** Uncached input tokens. */
  inputPerMTok: z.number().nonnegative(),
  /** Output tokens. */
  outputPerMTok: z.number().nonnegative(),
  /** Input tokens written to the cache with the 5-minute TTL. */
  cacheWrite5mPerMTok: z.number().nonnegative(),
  /** Input tokens written to the cache with the 1-hour TTL. */
  cacheWrite1hPerMTok: z.number().nonnegative(),
  /** Input tokens read from the cache. */
  cacheReadPerMTok: z.number().nonnegative(),
});
export type ModelPrice = z.infer<typeof ModelPrice>;

/**
 * Prices by model id or alias. A lookup tries the exact id, then the longest key the
 * id starts with, then the model family (`opus`, `sonnet`, `haiku`) named in the id.
 */
export const PriceTable = z.record(z.string(), ModelPrice);
export type PriceTable = z.infer<typeof PriceTable>;

/** The day `DEFAULT_PRICE_TABLE` was last checked. */
export const PRICE_TABLE_DATE = '2026-12-01';

function price(input: number, output: number): ModelPrice {
  // The API bills cache writes at 1.25× (5 minutes) or 2× (1 hour) the input price and
  // cache reads at 0.1×.
  return {
    inputPerMTok: input,
    outputPerMTok: output,
    cacheWrite5mPerMTok: input * 1.25,
    cacheWrite1hPerMTok: input * 2,
    cacheReadPerMTok: input * 0.1,
  };
}

/**
 * List prices per million tokens from Anthropic's public pricing page
 * (https://www.anthropic.com/pricing), as of `PRICE_TABLE_DATE`, by model family: Opus
 * $5 in / $25 out (Opus 4.5 and later), Sonnet $3 / $15, Haiku $1 / $5, with cache writes
 * at 1.25× (5 min) and 2× (1 h) the input price and cache reads at 0.1×. Older ids with
 * other prices are listed by their own prefix. Your contract may differ: pass your own
 * table where a function takes `prices`.
 */
export const DEFAULT_PRICE_TABLE: Readonly<PriceTable> = Object.freeze({
  opus: price(5, 25),
  sonnet: price(3, 15),
  haiku: price(1, 5),
  'claude-opus-4-0': price(15, 75),
  'claude-opus-4-1': price(15, 75),
  'claude-opus-4-2': price(15, 75),
  'claude-3-opus': price(15, 75),
  'claude-3-5-haiku': price(0.8, 4),
  'claude-3-haiku': price(0.25, 1.25),
});

const FAMILIES = ['opus', 'sonnet', 'haiku'] as const;

/** The price of `model` in `prices` (see `PriceTable` for the lookup order), or undefined. */
export function findModelPrice(
  model: string,
  prices: Readonly<PriceTable> = DEFAULT_PRICE_TABLE,
): ModelPrice | undefined {
  const id = model.trim().toLowerCase();
  const exact = prices[id];
  if (exact) return exact;
  let best: string | undefined;
  for (const key of Object.keys(prices)) {
    if (id.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  if (best !== undefined) return prices[best];
  const family = FAMILIES.find((name) => id.includes(name));
  return family ? prices[family] : undefined;
}

/**
 * The cost in US dollars of `usage` on `model`. Cache writes without a TTL split count as
 * 5-minute writes. A model missing from the table costs 0 and `priced` is false, so a
 * caller can say the figure is incomplete rather than show a wrong one.
 */
export function costOfUsage(
  usage: Usage | null | undefined,
  model: string,
  prices: Readonly<PriceTable> = DEFAULT_PRICE_TABLE,
): { costUsd: number; priced: boolean } {
  const found = findModelPrice(model, prices);
  if (!found) return { costUsd: 0, priced: false };
  const full = completeUsage(usage);
  const split =
    full.cache_creation.ephemeral_5m_input_tokens + full.cache_creation.ephemeral_1h_input_tokens;
  // The API reports the split when it has one; a total with no split is all 5-minute.
  const write1h = split > 0 ? full.cache_creation.ephemeral_1h_input_tokens : 0;
  const write5m = full.cache_creation_input_tokens - write1h;
  const perToken =
    full.input_tokens * found.inputPerMTok +
    full.output_tokens * found.outputPerMTok +
    write5m * found.cacheWrite5mPerMTok +
    write1h * found.cacheWrite1hPerMTok +
    full.cache_read_input_tokens * found.cacheReadPerMTok;
  return { costUsd: perToken / 1_000_000, priced: true };
}
