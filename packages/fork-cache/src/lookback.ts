import { DelegateError, invalidArgument, isObject } from '@delegate/core';

/** How far a cache read looks back from each breakpoint for an entry an earlier request wrote. */
export type LookbackRule = {
  /** Positions one breakpoint checks, the breakpoint itself counted as the first (20 on the API). */
  positions: number;
  /**
   * True when a run of consecutive `tool_use` blocks counts as one position, and so does a run
   * of consecutive `tool_result` blocks (the Claude API documents this); false counts every block.
   */
  groupToolRuns: boolean;
};

/**
 * The lookback the Claude API documents: at most 20 positions per breakpoint, counting the
 * breakpoint itself, with runs of `tool_use` and of `tool_result` blocks counted as one position.
 */
export const CLAUDE_API_LOOKBACK: Readonly<LookbackRule> = { positions: 20, groupToolRuns: true };

/**
 * The stricter reading this package uses by default: 20 positions, every block counted. A
 * layout that reaches its cached entry under this rule reaches it under the Claude API's too,
 * and on platforms that count every block (the API documents the grouping for itself only).
 */
export const STRICT_LOOKBACK: Readonly<LookbackRule> = { positions: 20, groupToolRuns: false };

/** Checks a caller's lookback rule and fills in the default (`STRICT_LOOKBACK`). */
export function resolveLookbackRule(
  rule: Partial<LookbackRule> | undefined,
  where: string,
): LookbackRule {
  if (rule !== undefined && !isObject(rule)) {
    throw invalidArgument({
      where,
      option: 'options.lookback',
      expected: 'an object such as { positions: 20 }',
      value: rule,
    });
  }
  const positions = rule?.positions ?? STRICT_LOOKBACK.positions;
  if (!Number.isInteger(positions) || positions < 1) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `lookback.positions is ${String(positions)}; it must be a whole number of positions, 1 or more (the API checks 20).`,
      { details: { positions } },
    );
  }
  const groupToolRuns = rule?.groupToolRuns ?? STRICT_LOOKBACK.groupToolRuns;
  if (typeof groupToolRuns !== 'boolean') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `lookback.groupToolRuns is ${JSON.stringify(groupToolRuns)}; it must be true or false.`,
      { details: { groupToolRuns } },
    );
  }
  return { positions, groupToolRuns };
}

function isRunType(type: string): boolean {
  return type === 'tool_use' || type === 'tool_result';
}

/**
 * Numbers the blocks of a request (given by their types, in cache order) with their lookback
 * positions: one per block, except that with `groupToolRuns` consecutive `tool_use` blocks
 * share one position, and so do consecutive `tool_result` blocks.
 */
export function lookbackPositions(types: readonly string[], rule: LookbackRule): number[] {
  const positions: number[] = [];
  let position = -1;
  types.forEach((type, index) => {
    const continuesRun = rule.groupToolRuns && isRunType(type) && types[index - 1] === type;
    if (!continuesRun) position += 1;
    positions.push(position);
  });
  return positions;
}

/**
 * True when a breakpoint on block `breakpointIndex` finds an entry on block `entryIndex` (both
 * indexes in cache order, `positions` from `lookbackPositions`): the entry lies at or before
 * the breakpoint, at most `rule.positions - 1` positions back.
 */
export function reachesEntry(options: {
  positions: readonly number[];
  entryIndex: number;
  breakpointIndex: number;
  rule: LookbackRule;
}): boolean {
  const { positions, entryIndex, breakpointIndex, rule } = options;
  if (entryIndex > breakpointIndex) return false;
  const distance = (positions[breakpointIndex] ?? 0) - (positions[entryIndex] ?? 0);
  return distance <= rule.positions - 1;
}

/**
 * True when a content block may carry `cache_control`: thinking blocks cannot, and neither can
 * an empty text block (the API refuses to cache one).
 */
export function canCarryBreakpoint(block: unknown): boolean {
  if (typeof block !== 'object' || block === null) return false;
  const { type, text } = block as { type?: unknown; text?: unknown };
  if (type === 'thinking' || type === 'redacted_thinking') return false;
  if (type === 'text') return typeof text === 'string' && text.length > 0;
  return typeof type === 'string';
}
