import { hashParts } from './canonical-json.js';
import { type LookbackRule, canCarryBreakpoint, lookbackPositions } from './lookback.js';

/** A breakpoint on a block: where a request writes a cache entry. */
export type BreakpointFingerprint = {
  /** Time to live of the entry written there. */
  ttl: '5m' | '1h';
  /** True when it comes from the request's top-level `cache_control` (automatic caching). */
  automatic: boolean;
};

/** One block of a request in cache order (tools, system, then message blocks). */
export type PrefixBlockFingerprint = {
  /** The part of the request the block belongs to. */
  part: 'tools' | 'system' | 'message';
  /** For `tools`: index of the tool definition. */
  toolIndex?: number;
  /** For `message`: index of the message. */
  messageIndex?: number;
  /** For `system` and `message`: index of the block in the system prompt or the message. */
  blockIndex?: number;
  /** The block's type (`text`, `tool_use`, …); `tool` for a tool definition. */
  type: string;
  /** Hash of everything in cache order up to and including this block: the key of its entry. */
  prefixHash: string;
  /** Lookback position (see `LookbackRule`): blocks of one tool run share a position. */
  position: number;
  /** The breakpoint on this block, when it carries one. */
  breakpoint?: BreakpointFingerprint;
};

/** One block as `fingerprintRequest` hands it over, before prefix hashes and positions. */
export type RawPrefixBlock = Omit<
  PrefixBlockFingerprint,
  'prefixHash' | 'position' | 'breakpoint'
> & {
  /** The block's own hash (no `cache_control`). */
  hash: string;
  /** The block as sent, to read its `cache_control`. */
  raw: unknown;
};

function breakpointOf(raw: unknown): BreakpointFingerprint | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const control = (raw as { cache_control?: unknown }).cache_control;
  if (typeof control !== 'object' || control === null) return undefined;
  return { ttl: (control as { ttl?: unknown }).ttl === '1h' ? '1h' : '5m', automatic: false };
}

function automaticTtl(control: unknown): '5m' | '1h' | undefined {
  if (typeof control !== 'object' || control === null) return undefined;
  return (control as { ttl?: unknown }).ttl === '1h' ? '1h' : '5m';
}

/**
 * Chains the blocks' hashes in cache order (the thinking config and other key options are
 * mixed in before the first message block, which they key), numbers their lookback
 * positions, and marks their breakpoints: explicit `cache_control`, plus the top-level marker
 * on the last block that can carry one (automatic caching).
 */
export function buildPrefixBlocks(options: {
  seed: string;
  messageKey: string;
  blocks: readonly RawPrefixBlock[];
  automatic: unknown;
  rule: LookbackRule;
}): PrefixBlockFingerprint[] {
  const { blocks, rule } = options;
  const positions = lookbackPositions(
    blocks.map((block) => block.type),
    rule,
  );
  let chain = options.seed;
  let keyed = false;
  const result = blocks.map((block, index): PrefixBlockFingerprint => {
    if (block.part === 'message' && !keyed) {
      chain = hashParts(chain, options.messageKey);
      keyed = true;
    }
    chain = hashParts(chain, block.part, String(block.messageIndex ?? ''), block.hash);
    const { hash: _hash, raw, ...where } = block;
    const breakpoint = breakpointOf(raw);
    return {
      ...where,
      prefixHash: chain,
      position: positions[index] ?? 0,
      ...(breakpoint ? { breakpoint } : {}),
    };
  });
  const ttl = automaticTtl(options.automatic);
  if (ttl !== undefined) {
    for (let index = result.length - 1; index >= 0; index--) {
      const block = result[index]!;
      if (!canCarryBreakpoint(blocks[index]?.raw) && block.part === 'message') continue;
      block.breakpoint ??= { ttl, automatic: true };
      break;
    }
  }
  return result;
}
