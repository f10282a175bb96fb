import { z } from 'zod';

/** Token accounting of one response or of a whole run, in the API's field names. */
export const Usage = z.object({
  /** Input tokens after the last cache hit and breakpoint (neither read nor written). */
  input_tokens: z.number().int().nonnegative(),
  /** Output tokens generated. */
  output_tokens: z.number().int().nonnegative(),
  /** Input tokens written to the prompt cache. */
  cache_creation_input_tokens: z.number().int().nonnegative().nullish(),
  /** Input tokens read from the prompt cache. */
  cache_read_input_tokens: z.number().int().nonnegative().nullish(),
  /** Split of the cache writes by time to live. */
  cache_creation: z
    .object({
      /** Tokens written with the 5-minute TTL. */
      ephemeral_5m_input_tokens: z.number().int().nonnegative(),
      /** Tokens written with the 1-hour TTL. */
      ephemeral_1h_input_tokens: z.number().int().nonnegative(),
    })
    .nullish(),
});
export type Usage = z.infer<typeof Usage>;

/** Usage with every optional field filled in. */
export type CompleteUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
};

/** Returns a fresh zero usage. */
export function emptyUsage(): CompleteUsage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
  };
}

/** Fills the optional fields of a usage object with zeros. */
export function completeUsage(usage: Usage | null | undefined): CompleteUsage {
  const result = emptyUsage();
  if (!usage) return result;
  result.input_tokens = usage.input_tokens;
  result.output_tokens = usage.output_tokens;
  result.cache_creation_input_tokens = usage.cache_creation_input_tokens ?? 0;
  result.cache_read_input_tokens = usage.cache_read_input_tokens ?? 0;
  result.cache_creation.ephemeral_5m_input_tokens =
    usage.cache_creation?.ephemeral_5m_input_tokens ?? 0;
  result.cache_creation.ephemeral_1h_input_tokens =
    usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  return result;
}

/** Adds two usages field by field; neither argument is changed. */
export function addUsage(a: Usage | null | undefined, b: Usage | null | undefined): CompleteUsage {
  const left = completeUsage(a);
  const right = completeUsage(b);
  return {
    input_tokens: left.input_tokens + right.input_tokens,
    output_tokens: left.output_tokens + right.output_tokens,
    cache_creation_input_tokens:
      left.cache_creation_input_tokens + right.cache_creation_input_tokens,
    cache_read_input_tokens: left.cache_read_input_tokens + right.cache_read_input_tokens,
    cache_creation: {
      ephemeral_5m_input_tokens:
        left.cache_creation.ephemeral_5m_input_tokens +
        right.cache_creation.ephemeral_5m_input_tokens,
      ephemeral_1h_input_tokens:
        left.cache_creation.ephemeral_1h_input_tokens +
        right.cache_creation.ephemeral_1h_input_tokens,
    },
  };
}

/** All input tokens of a usage: uncached + cache written + cache read. */
export function totalInputTokens(usage: Usage | null | undefined): number {
  const full = completeUsage(usage);
  return full.input_tokens + full.cache_creation_input_tokens + full.cache_read_input_tokens;
}

/** Total tokens (all input plus output), the figure an agent's result reports. */
export function totalTokens(usage: Usage | null | undefined): number {
  return totalInputTokens(usage) + completeUsage(usage).output_tokens;
}

/** Share of input tokens read from the cache, between 0 and 1 (0 when there is no input). */
export function cacheHitRate(usage: Usage | null | undefined): number {
  const total = totalInputTokens(usage);
  return total > 0 ? completeUsage(usage).cache_read_input_tokens / total : 0;
}
