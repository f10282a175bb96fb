import { invalidArgument, isObject } from '@delegate/core';
import { type CacheReach, type PrefixBlockAddress } from './assess-cache-reach.js';

/** Names a block the way diagnoses do: `message 3 block 0 (tool_result)`, `system block 1`, `tool 2`. */
export function describePrefixBlock(block: PrefixBlockAddress): string {
  if (block.part === 'tools') return `tool ${block.toolIndex ?? 0}`;
  if (block.part === 'system') return `system block ${block.blockIndex ?? 0}`;
  return `message ${block.messageIndex ?? 0} block ${block.blockIndex ?? 0} (${block.type})`;
}

function unit(reach: CacheReach): string {
  return reach.lookback.groupToolRuns ? 'positions' : 'blocks';
}

/**
 * One sentence on why request b does not read what request a cached, or undefined when it
 * does: no entry in the shared prefix, no breakpoint after it, or one too far for the lookback.
 */
export function describeCacheReach(reach: CacheReach): string | undefined {
  if (!isObject(reach) || !isObject(reach.lookback)) {
    throw invalidArgument({
      where: 'describeCacheReach()',
      option: 'reach',
      expected: 'a cache reach (from assessCacheReach or diagnoseCacheBreak)',
      value: reach,
    });
  }
  if (reach.reachable) return undefined;
  const { nearestEntry, readEntry, breakpoint, distance } = reach;
  const reads = readEntry
    ? `request b reads only up to ${describePrefixBlock(readEntry)}`
    : 'request b reads nothing request a wrote';
  if (reach.problem === 'no-entry' || nearestEntry === undefined) {
    return reach.sharedBlocks === 0
      ? 'the requests share no block, so request b can read nothing request a cached'
      : `request a has no breakpoint inside the ${reach.sharedBlocks} blocks both requests share, so it cached nothing request b can read; put a breakpoint on the last block they share`;
  }
  if (reach.problem === 'no-breakpoint' || breakpoint === undefined || distance === undefined) {
    return `request b has no breakpoint at or after the nearest cached block (${describePrefixBlock(nearestEntry)}), so ${reads}; put a breakpoint on or after it`;
  }
  const window = reach.lookback.positions;
  return (
    `the nearest cached block (${describePrefixBlock(nearestEntry)}) is ${distance} ${unit(reach)} before request b's first breakpoint after it (${describePrefixBlock(breakpoint)}), ` +
    `and a breakpoint looks back at most ${window} ${unit(reach)}, itself included, so ${reads}; ` +
    `put a breakpoint at most ${window - 1} ${unit(reach)} after ${describePrefixBlock(nearestEntry)} (for example on it)`
  );
}
