import { DelegateError, checkObject } from '@delegate/core';
import { checkMessages } from './check-argument.js';
import { type ForkLayout, DEFAULT_FORK_LAYOUT, assertForkLayout } from './fork-layout.js';
import { type LookbackRule } from './lookback.js';
import {
  type BlockAddress,
  type BreakpointMessage,
  flattenMessageBlocks,
  lastMarkableIndex,
  messageBlocks,
} from './message-blocks.js';
import { planCacheBreakpoints } from './plan-cache-breakpoints.js';

/** Options of `planForkBreakpoints`. */
export type PlanForkBreakpointsOptions = {
  /** The fork's first request messages (wire form): the inherited history, then its own. */
  messages: readonly BreakpointMessage[];
  /**
   * How many leading messages are inherited: the messages of the parent's last request,
   * whose last block the parent cached. With the two messages `buildForkChildMessages`
   * returns it is `messages.length - 2`.
   */
  inheritedMessages: number;
  /** The layout the fork's messages were built with (default `DEFAULT_FORK_LAYOUT`). */
  layout?: ForkLayout;
  /** Breakpoints this plan may use (default 3: four minus the one on the system prompt). */
  maxBreakpoints?: number;
  /** The lookback to plan for (default `STRICT_LOOKBACK`). */
  lookback?: Partial<LookbackRule>;
};

const WHERE = 'planForkBreakpoints';

function checkInherited(value: unknown, messageCount: number): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < messageCount) {
    return value;
  }
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${WHERE}: inheritedMessages is ${JSON.stringify(value)}; it must be a whole number below the request's ${messageCount} messages (the fork's own messages come after the inherited ones).`,
    { details: { inheritedMessages: value, messageCount } },
  );
}

/** The last block of the inherited history that can carry a breakpoint: where the parent wrote. */
function inheritedEnd(
  messages: readonly BreakpointMessage[],
  inherited: number,
): BlockAddress | undefined {
  if (inherited === 0) return undefined;
  const blocks = flattenMessageBlocks(messages.slice(0, inherited));
  const index = lastMarkableIndex(blocks);
  return index === undefined ? undefined : blocks[index]?.address;
}

/** The block before the directive line: the rules block, shared by siblings in `shared-message`. */
function sharedBeforeDirective(messages: readonly BreakpointMessage[]): BlockAddress | undefined {
  const messageIndex = messages.length - 1;
  const last = messages[messageIndex];
  if (last === undefined) return undefined;
  const count = messageBlocks(last).length;
  return count >= 2 ? { messageIndex, blockIndex: count - 2 } : undefined;
}

/**
 * Chooses the breakpoints of a fork's first request: the end of the inherited history when
 * the directive is beyond the lookback from it (so the parent's cached history is read
 * whatever the number of siblings), the directive line (written for the child's next turn)
 * and, in the `shared-message` layout, the block just before the directive line (the worker
 * rules), whose entry lets every later sibling read all they share. The fork's later turns
 * use `planCacheBreakpoints` with the previous request's breakpoints as `cachedAt`.
 */
export function planForkBreakpoints(options: PlanForkBreakpointsOptions): BlockAddress[] {
  checkObject(`${WHERE}()`, 'options', options);
  checkMessages(`${WHERE}()`, 'options.messages', options.messages);
  const layout = assertForkLayout(options.layout ?? DEFAULT_FORK_LAYOUT, WHERE);
  const inherited = checkInherited(options.inheritedMessages, options.messages.length);
  const end = inheritedEnd(options.messages, inherited);
  const shared = layout === 'shared-message' ? sharedBeforeDirective(options.messages) : undefined;
  return planCacheBreakpoints({
    messages: options.messages,
    ...(end ? { cachedAt: [end] } : {}),
    ...(shared ? { share: [shared] } : {}),
    ...(options.maxBreakpoints === undefined ? {} : { maxBreakpoints: options.maxBreakpoints }),
    ...(options.lookback === undefined ? {} : { lookback: options.lookback }),
  });
}
