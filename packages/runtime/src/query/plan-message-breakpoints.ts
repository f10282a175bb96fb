import {
  type BlockAddress,
  type ForkLayout,
  planCacheBreakpoints,
  planForkBreakpoints,
} from '@delegate/fork-cache';
import type { WireMessage } from './normalize-messages.js';

/** What `planMessageBreakpoints` needs to know about the request being built. */
export type MessageBreakpointInput = {
  /** The request's wire messages, as they will be sent. */
  messages: readonly WireMessage[];
  /**
   * Breakpoints the previous request of this loop carried: it wrote cache entries there.
   * Only the latest one before the end matters (see `planCacheBreakpoints`).
   */
  previous?: readonly BlockAddress[];
  /**
   * Set on a fork child's first request: its last two wire messages are its own (the copied
   * assistant turn and the placeholders, rules notice and directive), everything before them
   * is the parent's last request, whose end the parent cached.
   */
  forkLayout?: ForkLayout;
};

/** The message breakpoints the API accepts besides the one on the last system block. */
const MESSAGE_SLOTS = 3;

function isAt(messages: readonly WireMessage[], address: BlockAddress): boolean {
  const block = messages[address.messageIndex]?.content[address.blockIndex];
  return block !== undefined && block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

/**
 * The block before the last one of the last message, when it can carry a breakpoint:
 * requests that differ only in their last block (siblings started from one message, one
 * after the other) then share its entry. An extra entry costs nothing (writes are billed
 * by the tokens they cover, and the tail's entry covers these anyway).
 */
function beforeLast(messages: readonly WireMessage[]): BlockAddress[] {
  const messageIndex = messages.length - 1;
  const blockIndex = (messages[messageIndex]?.content.length ?? 0) - 2;
  return blockIndex >= 0 && isAt(messages, { messageIndex, blockIndex })
    ? [{ messageIndex, blockIndex }]
    : [];
}

/**
 * Plans the request's message breakpoints so it reads what the previous request cached
 * whatever the number of blocks added since (a wide fan-out of forks adds two per fork), and
 * writes its own end for the next one. Only the messages from the latest cached entry on are
 * looked at, so the cost stays flat in the length of the conversation.
 */
function planAfterPrevious(
  messages: readonly WireMessage[],
  previous: readonly BlockAddress[],
): BlockAddress[] {
  const last = previous
    .filter((address) => isAt(messages, address))
    .sort(
      (left, right) => left.messageIndex - right.messageIndex || left.blockIndex - right.blockIndex,
    )
    .at(-1);
  const from = last?.messageIndex ?? messages.length - 1;
  const window = messages.slice(from);
  const planned = planCacheBreakpoints({
    messages: window,
    ...(last ? { cachedAt: [{ messageIndex: 0, blockIndex: last.blockIndex }] } : {}),
    share: beforeLast(window),
    maxBreakpoints: MESSAGE_SLOTS,
  });
  return planned.map((address) => ({ ...address, messageIndex: address.messageIndex + from }));
}

/**
 * Chooses which message blocks of a request carry `cache_control`: a fork's first request
 * uses `planForkBreakpoints` (the end of the inherited history when the fork's own blocks
 * would put it beyond the lookback, the end, and in `shared-message` the rules notice before
 * the directive so a waiting sibling reads it); every other request `planCacheBreakpoints`
 * from the previous request's breakpoints.
 */
export function planMessageBreakpoints(input: MessageBreakpointInput): BlockAddress[] {
  const { messages } = input;
  if (messages.length === 0) return [];
  if (input.forkLayout && messages.length > 2) {
    return planForkBreakpoints({
      messages,
      inheritedMessages: messages.length - 2,
      layout: input.forkLayout,
      maxBreakpoints: MESSAGE_SLOTS,
    });
  }
  return planAfterPrevious(messages, input.previous ?? []);
}
