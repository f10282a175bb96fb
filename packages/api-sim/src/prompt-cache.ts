import type { PrefixBlock } from './flatten-prefix.js';
import type { Clock } from './manual-clock.js';
import type { CacheTtl } from './wire-types.js';

/** Milliseconds each cache TTL lasts. */
export const CACHE_TTL_MS: Readonly<Record<CacheTtl, number>> = {
  '5m': 5 * 60_000,
  '1h': 60 * 60_000,
};

/**
 * Default minimum cacheable prefix per model: keys are matched as substrings of the model name, the
 * longest matching key wins. From the API's prompt-caching documentation as of 2026: 1,024 tokens
 * for most models, 2,048 for the Haiku 3 family, 4,096 for Haiku 4.5, Opus 4.5 and Opus 4.6.
 */
export const DEFAULT_MIN_CACHEABLE_TOKENS: Readonly<Record<string, number>> = {
  default: 1024,
  haiku: 2048,
  'haiku-4-5': 4096,
  'opus-4-5': 4096,
  'opus-4-6': 4096,
};

/**
 * Default number of positions a read checks per breakpoint, the breakpoint itself counted as the
 * first: a breakpoint at position p finds entries at p, p-1, …, p-19.
 */
export const DEFAULT_LOOKBACK_BLOCKS = 20;

/** True for the block types whose consecutive runs the Claude API counts as one lookback position. */
function isRunType(type: string): boolean {
  return type === 'tool_use' || type === 'tool_result';
}

/**
 * The lookback position of every block: its index, except that (when `groupToolRuns` is set) a run
 * of consecutive `tool_use` blocks shares one position, and so does a run of `tool_result` blocks.
 */
export function lookbackPositions(
  blocks: readonly Pick<PrefixBlock, 'part' | 'type'>[],
  groupToolRuns: boolean,
): number[] {
  const positions: number[] = [];
  let position = -1;
  blocks.forEach((block, index) => {
    const previous = blocks[index - 1];
    const continuesRun =
      groupToolRuns &&
      previous !== undefined &&
      block.part === 'messages' &&
      previous.part === 'messages' &&
      isRunType(block.type) &&
      block.type === previous.type;
    if (!continuesRun) position += 1;
    positions.push(position);
  });
  return positions;
}

/** The input side of `usage`, as the cache accounts it. */
export type InputUsage = {
  /** Tokens neither read from nor written to the cache. */
  input_tokens: number;
  /** Tokens written to the cache by this request. */
  cache_creation_input_tokens: number;
  /** Tokens read from the cache. */
  cache_read_input_tokens: number;
  /** Split of the writes by TTL. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
};

/** What the cache decided for one request. */
export type CachePlan = {
  /** The usage the response reports. */
  usage: InputUsage;
  /** Position of the block whose prefix was read, if any. */
  hitPosition: number | undefined;
  /** Positions of the breakpoints this request writes. */
  writePositions: number[];
  /** Makes the writes visible to later requests; call when the response starts. */
  commit(): void;
};

/** A live cache entry, as tests see it. */
export type CacheEntryInfo = {
  /** Model the entry belongs to. */
  model: string;
  /** Hash chain of the cached prefix. */
  hash: string;
  /** Tokens of the cached prefix. */
  tokens: number;
  /** TTL the entry was written (or last upgraded) with. */
  ttl: CacheTtl;
  /** Clock time at which the entry expires unless read again. */
  expiresAt: number;
  /** How many reads hit this entry. */
  hits: number;
};

/** Options of a prompt cache. */
export type PromptCacheOptions = {
  /** Time source for TTLs. */
  clock: Clock;
  /** Positions a read checks per breakpoint, the breakpoint itself included (default 20). */
  lookbackBlocks?: number;
  /**
   * True (the default, as the Claude API documents): a run of consecutive `tool_use` blocks counts
   * as one lookback position, and so does a run of `tool_result` blocks. False counts every block.
   */
  groupToolRuns?: boolean;
  /** Minimum cacheable tokens: one number for all models, or a table keyed by model substring with a `default`. */
  minCacheableTokens?: number | Readonly<Record<string, number>>;
};

/**
 * The simulated prompt cache. Entries are keyed by model and by the hash chain of a prefix; they
 * expire after their TTL on the injected clock; a read refreshes the entry it hits and the live
 * entries at the request's earlier breakpoints.
 */
export class PromptCache {
  readonly #entries = new Map<string, CacheEntryInfo>();
  readonly #clock: Clock;
  readonly #lookback: number;
  readonly #groupToolRuns: boolean;
  readonly #minimum: number | Readonly<Record<string, number>>;

  constructor(options: PromptCacheOptions) {
    this.#clock = options.clock;
    this.#lookback = options.lookbackBlocks ?? DEFAULT_LOOKBACK_BLOCKS;
    this.#groupToolRuns = options.groupToolRuns ?? true;
    this.#minimum = options.minCacheableTokens ?? DEFAULT_MIN_CACHEABLE_TOKENS;
  }

  /** Number of live (unexpired, committed) entries. */
  get size(): number {
    this.#purge();
    return this.#entries.size;
  }

  /** Removes every entry. */
  clear(): void {
    this.#entries.clear();
  }

  /** Lists the live entries. */
  entries(): CacheEntryInfo[] {
    this.#purge();
    return [...this.#entries.values()].map((entry) => ({ ...entry }));
  }

  /** The minimum cacheable prefix length for a model. */
  minimumFor(model: string): number {
    if (typeof this.#minimum === 'number') return this.#minimum;
    let best: { length: number; value: number } | undefined;
    for (const [key, value] of Object.entries(this.#minimum)) {
      if (key !== 'default' && model.includes(key) && (!best || key.length > best.length)) {
        best = { length: key.length, value };
      }
    }
    return best?.value ?? this.#minimum.default ?? DEFAULT_MIN_CACHEABLE_TOKENS.default ?? 1024;
  }

  /**
   * Reads the longest cached prefix reachable from the request's breakpoints (each breakpoint checks
   * `lookbackBlocks` positions, itself included), and plans writes at every breakpoint past that hit
   * whose prefix reaches the model's minimum. Writes become visible only through `commit()`; their
   * lifetime counts from this call (the start of the request), as the API measures it.
   */
  plan(model: string, blocks: readonly PrefixBlock[], totalTokens: number): CachePlan {
    const now = this.#clock.now();
    const minimum = this.minimumFor(model);
    const breakpoints = blocks.filter((block) => block.breakpoint !== undefined);
    const hit = this.#findHit({ model, blocks, breakpoints, now, minimum });
    if (hit) this.#refresh({ model, hit, breakpoints, now });

    const read = hit?.cumulativeTokens ?? 0;
    const split = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    const writes: PrefixBlock[] = [];
    let previous = read;
    for (const breakpoint of breakpoints) {
      if (hit && breakpoint.position <= hit.position) continue;
      if (breakpoint.cumulativeTokens < minimum || !breakpoint.breakpoint) continue;
      const segment = breakpoint.cumulativeTokens - previous;
      if (breakpoint.breakpoint.ttl === '1h') split.ephemeral_1h_input_tokens += segment;
      else split.ephemeral_5m_input_tokens += segment;
      previous = breakpoint.cumulativeTokens;
      writes.push(breakpoint);
    }
    const created = previous - read;
    const usage: InputUsage = {
      input_tokens: totalTokens - read - created,
      cache_creation_input_tokens: created,
      cache_read_input_tokens: read,
      cache_creation: split,
    };
    let committed = false;
    return {
      usage,
      hitPosition: hit?.position,
      writePositions: writes.map((block) => block.position),
      commit: () => {
        if (committed) return;
        committed = true;
        for (const block of writes) this.#write(model, block, now);
      },
    };
  }

  /** The longest live entry any breakpoint's lookback window finds. */
  #findHit(request: {
    model: string;
    blocks: readonly PrefixBlock[];
    breakpoints: readonly PrefixBlock[];
    now: number;
    minimum: number;
  }): PrefixBlock | undefined {
    const { model, blocks, breakpoints, now, minimum } = request;
    const positions = lookbackPositions(blocks, this.#groupToolRuns);
    let hit: PrefixBlock | undefined;
    for (const breakpoint of breakpoints) {
      const lowest = (positions[breakpoint.position] ?? 0) - (this.#lookback - 1);
      for (let index = breakpoint.position; index >= 0; index--) {
        const block = blocks[index];
        if (!block || (positions[index] ?? 0) < lowest) break;
        if (block.cumulativeTokens < minimum) break;
        if (hit && block.position <= hit.position) break;
        if (this.#live(model, block.hash, now)) {
          hit = block;
          break;
        }
      }
    }
    return hit;
  }

  /** Refreshes the entry read and the live entries at the request's earlier breakpoints. */
  #refresh(read: {
    model: string;
    hit: PrefixBlock;
    breakpoints: readonly PrefixBlock[];
    now: number;
  }): void {
    const { model, hit, breakpoints, now } = read;
    const entry = this.#live(model, hit.hash, now);
    if (entry) {
      entry.hits += 1;
      entry.expiresAt = now + CACHE_TTL_MS[entry.ttl];
    }
    // The read used the whole prefix, so live entries at this request's earlier breakpoints are
    // refreshed too: a system-prompt entry stays warm while the conversation after it is read.
    for (const breakpoint of breakpoints) {
      if (breakpoint.position >= hit.position) break;
      const inner = this.#live(model, breakpoint.hash, now);
      if (inner) inner.expiresAt = Math.max(inner.expiresAt, now + CACHE_TTL_MS[inner.ttl]);
    }
  }

  #key(model: string, hash: string): string {
    return `${model}\u0000${hash}`;
  }

  #live(model: string, hash: string, now: number): CacheEntryInfo | undefined {
    const key = this.#key(model, hash);
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #write(model: string, block: PrefixBlock, now: number): void {
    const ttl = block.breakpoint?.ttl ?? '5m';
    const existing = this.#live(model, block.hash, now);
    const keepTtl = existing?.ttl === '1h' ? '1h' : ttl;
    this.#entries.set(this.#key(model, block.hash), {
      model,
      hash: block.hash,
      tokens: block.cumulativeTokens,
      ttl: keepTtl,
      expiresAt: Math.max(existing?.expiresAt ?? 0, now + CACHE_TTL_MS[ttl]),
      hits: existing?.hits ?? 0,
    });
  }

  #purge(): void {
    const now = this.#clock.now();
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}
