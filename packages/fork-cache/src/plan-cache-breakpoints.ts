import { DelegateError, checkObject, checkOptionalArray } from '@delegate/core';
import { checkMessages } from './check-argument.js';
import {
  type LookbackRule,
  lookbackPositions,
  reachesEntry,
  resolveLookbackRule,
} from './lookback.js';
import {
  type BlockAddress,
  type BreakpointMessage,
  type FlatMessageBlock,
  flatIndexOf,
  flattenMessageBlocks,
  lastMarkableIndex,
} from './message-blocks.js';

/** The API accepts at most four breakpoints per request; one usually goes on the system prompt. */
const DEFAULT_MESSAGE_BREAKPOINTS = 3;

/** Options of `planCacheBreakpoints`. */
export type PlanCacheBreakpointsOptions = {
  /** The request's messages (wire form: merged and paired, as they will be sent). */
  messages: readonly BreakpointMessage[];
  /**
   * Blocks at which earlier requests of this conversation wrote cache entries: the
   * breakpoints the previous request carried (for a fork's first request, the end of the
   * inherited history, where the parent's last request wrote). The latest one before the
   * last block is kept within the lookback of some breakpoint.
   */
  cachedAt?: readonly BlockAddress[];
  /**
   * Blocks that sibling requests share and that should be written so the next sibling can
   * read them (a fork's rules block). Placed after the other breakpoints, while slots last.
   */
  share?: readonly BlockAddress[];
  /** Breakpoints this plan may use (default 3: the API's four minus one on the system prompt). */
  maxBreakpoints?: number;
  /** The lookback to plan for (default `STRICT_LOOKBACK`: 20 positions, every block counted). */
  lookback?: Partial<LookbackRule>;
};

function checkMaxBreakpoints(value: unknown): number {
  if (value === undefined) return DEFAULT_MESSAGE_BREAKPOINTS;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 4)
    return value;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `planCacheBreakpoints: maxBreakpoints is ${JSON.stringify(value)}; it must be a whole number from 0 to 4 (the API allows four breakpoints per request).`,
    { details: { maxBreakpoints: value } },
  );
}

function markableIndexes(
  blocks: readonly FlatMessageBlock[],
  addresses: readonly BlockAddress[],
  name: string,
): number[] {
  const where = 'planCacheBreakpoints()';
  checkOptionalArray(where, `options.${name}`, addresses);
  return addresses.map((address, position) => {
    checkObject(where, `options.${name}[${position}]`, address);
    const index = flatIndexOf(blocks, address, `planCacheBreakpoints: ${name}`);
    if (!blocks[index]?.markable) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `planCacheBreakpoints: ${name} names block ${address.blockIndex} of message ${address.messageIndex}, a ${blocks[index]?.type} block, which cannot carry cache_control (thinking blocks and empty text cannot). Name a text, tool_use or tool_result block.`,
        { details: { address } },
      );
    }
    return index;
  });
}

/**
 * Chooses the message blocks that carry `cache_control` so that a request (1) reads what the
 * previous request of its conversation cached, whatever the number of blocks added since:
 * when the last block is farther than the lookback from the latest `cachedAt` entry, that
 * entry's block gets a breakpoint of its own; (2) writes its own end (the last block that can
 * carry a breakpoint) for the next turn; (3) writes the `share` blocks for its siblings. Slots
 * go in that order. Returns the addresses in cache order; pure.
 */
export function planCacheBreakpoints(options: PlanCacheBreakpointsOptions): BlockAddress[] {
  checkObject('planCacheBreakpoints()', 'options', options);
  checkMessages('planCacheBreakpoints()', 'options.messages', options.messages);
  const slots = checkMaxBreakpoints(options.maxBreakpoints);
  const rule = resolveLookbackRule(options.lookback, 'planCacheBreakpoints()');
  const blocks = flattenMessageBlocks(options.messages);
  const cached = markableIndexes(blocks, options.cachedAt ?? [], 'cachedAt');
  const shared = markableIndexes(blocks, options.share ?? [], 'share');
  const tail = lastMarkableIndex(blocks);
  if (tail === undefined || slots === 0) return [];
  const positions = lookbackPositions(
    blocks.map((block) => block.type),
    rule,
  );
  const reaches = (breakpointIndex: number, entryIndex: number): boolean =>
    reachesEntry({ positions, entryIndex, breakpointIndex, rule });

  const chosen: number[] = [];
  const latestCached = Math.max(...cached.filter((index) => index <= tail), -1);
  if (latestCached >= 0 && !reaches(tail, latestCached)) {
    // A shared block within reach serves as the bridge; otherwise the entry's own block does.
    const bridge = shared.find((index) => reaches(index, latestCached));
    chosen.push(bridge ?? latestCached);
  }
  for (const index of [tail, ...shared]) {
    if (chosen.length >= slots) break;
    if (!chosen.includes(index)) chosen.push(index);
  }
  return chosen
    .slice(0, slots)
    .sort((left, right) => left - right)
    .map((index) => blocks[index]!.address);
}
