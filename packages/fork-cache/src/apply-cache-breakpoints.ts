import { type CacheControl, DelegateError } from '@delegate/core';
import { canCarryBreakpoint } from './lookback.js';
import { type BlockAddress, type BreakpointMessage, messageBlocks } from './message-blocks.js';

/** Options of `applyCacheBreakpoints`. */
export type ApplyCacheBreakpointsOptions<M extends BreakpointMessage> = {
  /** The request's messages; never changed. */
  messages: readonly M[];
  /** The blocks that get `cache_control` (for example from `planCacheBreakpoints`). */
  breakpoints: readonly BlockAddress[];
  /** The marker to set (default `{ type: 'ephemeral' }`, a 5-minute entry). */
  cacheControl?: CacheControl;
};

function withoutMarker(block: unknown): unknown {
  if (typeof block !== 'object' || block === null || !('cache_control' in block)) return block;
  const { cache_control: _marker, ...rest } = block as Record<string, unknown>;
  return rest;
}

/**
 * Returns copies of the messages with `cache_control` on exactly the given blocks and on no
 * other message block (a string content becomes the one text block it stands for). Only the
 * messages and blocks that change are copied; the input is never changed. Throws
 * `INVALID_ARGUMENT` for an address that is not in the messages or a block that cannot carry
 * a breakpoint, or when more than four are given.
 */
export function applyCacheBreakpoints<M extends BreakpointMessage>(
  options: ApplyCacheBreakpointsOptions<M>,
): M[] {
  const { messages, breakpoints } = options;
  const cacheControl = options.cacheControl ?? { type: 'ephemeral' };
  if (breakpoints.length > 4) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `applyCacheBreakpoints: ${breakpoints.length} breakpoints given; the API accepts at most 4 per request.`,
      { details: { count: breakpoints.length } },
    );
  }
  const wanted = new Set(
    breakpoints.map((address) => `${address.messageIndex}:${address.blockIndex}`),
  );
  const found = new Set<string>();
  const result = messages.map((message, messageIndex) => {
    const blocks = messageBlocks(message);
    let changed = typeof message.content === 'string';
    const content = blocks.map((block, blockIndex) => {
      const key = `${messageIndex}:${blockIndex}`;
      if (!wanted.has(key)) {
        const stripped = withoutMarker(block);
        if (stripped !== block) changed = true;
        return stripped;
      }
      if (!canCarryBreakpoint(block)) {
        throw new DelegateError(
          'INVALID_ARGUMENT',
          `applyCacheBreakpoints: block ${blockIndex} of message ${messageIndex} cannot carry cache_control (thinking blocks and empty text cannot).`,
          { details: { messageIndex, blockIndex } },
        );
      }
      found.add(key);
      changed = true;
      return { ...(block as object), cache_control: { ...cacheControl } };
    });
    return changed ? ({ ...message, content } as M) : message;
  });
  const missing = [...wanted].filter((key) => !found.has(key));
  if (missing.length > 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `applyCacheBreakpoints: no block at ${missing.map((key) => `message ${key.replace(':', ', block ')}`).join('; ')}. Pass addresses of blocks the messages hold.`,
      { details: { missing } },
    );
  }
  return result;
}
