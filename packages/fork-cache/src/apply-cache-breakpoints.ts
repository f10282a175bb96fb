import {
  type CacheControl,
  DelegateError,
  checkArray,
  checkObject,
  checkOptionalObject,
} from '@delegate/core';
import { checkMessages } from './check-argument.js';
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

// The block without `cache_control`, also on the blocks a `tool_result` holds (the API
// counts those toward its limit of four too); the block itself when it has none.
function withoutMarker(block: unknown): unknown {
  if (typeof block !== 'object' || block === null) return block;
  const nested = (block as { content?: unknown }).content;
  const inner = Array.isArray(nested) ? nested.map(withoutMarker) : undefined;
  const innerChanged =
    inner !== undefined && inner.some((item, index) => item !== (nested as unknown[])[index]);
  if (!('cache_control' in block) && !innerChanged) return block;
  const { cache_control: _marker, ...rest } = block as Record<string, unknown>;
  return innerChanged ? { ...rest, content: inner } : rest;
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
  const where = 'applyCacheBreakpoints()';
  checkObject(where, 'options', options);
  checkMessages(where, 'options.messages', options.messages);
  checkArray(where, 'options.breakpoints', options.breakpoints);
  options.breakpoints.forEach((address, index) =>
    checkObject(where, `options.breakpoints[${index}]`, address),
  );
  checkOptionalObject(where, 'options.cacheControl', options.cacheControl);
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
      return { ...(withoutMarker(block) as object), cache_control: { ...cacheControl } };
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
