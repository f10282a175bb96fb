import { invalidArgument, isObject } from '@delegate/core';
import { type RequestFingerprint } from './fingerprint-request.js';
import { type LookbackRule, reachesEntry } from './lookback.js';
import { type PrefixBlockFingerprint } from './prefix-blocks.js';

/** A block of a request in cache order, named as a diagnosis names it. */
export type PrefixBlockAddress = Pick<
  PrefixBlockFingerprint,
  'part' | 'toolIndex' | 'messageIndex' | 'blockIndex' | 'type' | 'position'
> & {
  /** Index of the block in cache order (in `RequestFingerprint.prefixBlocks`). */
  index: number;
};

/** Whether a later request can read the cache entries an earlier one wrote in their shared prefix. */
export type CacheReach = {
  /** True when request b reads the latest entry request a wrote inside the prefix they share. */
  reachable: boolean;
  /**
   * Why not: `no-entry` (a has no breakpoint inside the shared prefix, so it wrote nothing b
   * could read), `no-breakpoint` (b has no breakpoint at or after that entry) or
   * `beyond-lookback` (b's first breakpoint after it is too far away).
   */
  problem?: 'no-entry' | 'no-breakpoint' | 'beyond-lookback';
  /** Leading blocks (in cache order) the two requests share byte for byte. */
  sharedBlocks: number;
  /** The latest block of the shared prefix on which request a has a breakpoint. */
  nearestEntry?: PrefixBlockAddress;
  /** The latest entry of a that some breakpoint of b finds: what b reads up to. */
  readEntry?: PrefixBlockAddress;
  /** Request b's first breakpoint at or after `nearestEntry`. */
  breakpoint?: PrefixBlockAddress;
  /** Lookback positions from `nearestEntry` to `breakpoint`. */
  distance?: number;
  /** The lookback rule of request b's fingerprint. */
  lookback: LookbackRule;
};

function address(blocks: readonly PrefixBlockFingerprint[], index: number): PrefixBlockAddress {
  const block = blocks[index]!;
  const { part, toolIndex, messageIndex, blockIndex, type, position } = block;
  return {
    index,
    part,
    type,
    position,
    ...(toolIndex === undefined ? {} : { toolIndex }),
    ...(messageIndex === undefined ? {} : { messageIndex }),
    ...(blockIndex === undefined ? {} : { blockIndex }),
  };
}

function countSharedBlocks(a: RequestFingerprint, b: RequestFingerprint): number {
  const count = Math.min(a.prefixBlocks.length, b.prefixBlocks.length);
  let shared = 0;
  while (
    shared < count &&
    a.prefixBlocks[shared]?.prefixHash === b.prefixBlocks[shared]?.prefixHash
  ) {
    shared++;
  }
  return shared;
}

function checkFingerprint(name: string, value: unknown): void {
  if (isObject(value) && Array.isArray(value.prefixBlocks)) return;
  throw invalidArgument({
    where: 'assessCacheReach()',
    option: name,
    expected: 'a request fingerprint (from fingerprintRequest)',
    value,
  });
}

function latest(indexes: readonly number[]): number | undefined {
  return indexes.length === 0 ? undefined : Math.max(...indexes);
}

/**
 * Models the API's read for request b after request a: a wrote an entry at each of its
 * breakpoints; b finds an entry when it lies in the prefix both share byte for byte and
 * within the lookback of one of b's breakpoints (b's fingerprint carries the rule). Reports
 * whether b reaches the latest such entry, and if not, why and how far it is.
 */
export function assessCacheReach(a: RequestFingerprint, b: RequestFingerprint): CacheReach {
  checkFingerprint('a', a);
  checkFingerprint('b', b);
  const sharedBlocks = countSharedBlocks(a, b);
  const rule = b.lookback;
  const base = { sharedBlocks, lookback: rule };
  const entries = a.prefixBlocks
    .map((block, index) => (block.breakpoint && index < sharedBlocks ? index : -1))
    .filter((index) => index >= 0);
  const nearest = latest(entries);
  if (nearest === undefined) return { ...base, reachable: false, problem: 'no-entry' };

  const positions = b.prefixBlocks.map((block) => block.position);
  const readers = b.prefixBlocks
    .map((block, index) => (block.breakpoint ? index : -1))
    .filter((index) => index >= 0);
  const found = entries.filter((entry) =>
    readers.some((reader) =>
      reachesEntry({ positions, entryIndex: entry, breakpointIndex: reader, rule }),
    ),
  );
  const read = latest(found);
  const withRead = {
    ...base,
    nearestEntry: address(b.prefixBlocks, nearest),
    ...(read === undefined ? {} : { readEntry: address(b.prefixBlocks, read) }),
  };
  if (read === nearest) return { ...withRead, reachable: true };
  const after = readers.find((reader) => reader >= nearest);
  if (after === undefined) return { ...withRead, reachable: false, problem: 'no-breakpoint' };
  return {
    ...withRead,
    reachable: false,
    problem: 'beyond-lookback',
    breakpoint: address(b.prefixBlocks, after),
    distance: (positions[after] ?? 0) - (positions[nearest] ?? 0),
  };
}
