import { DelegateError, checkObject } from '@delegate/core';
import { checkMessages } from './check-argument.js';
import { type ForkLayout, assertForkLayout } from './fork-layout.js';
import { type BreakpointMessage, messageBlocks } from './message-blocks.js';

/**
 * Tokens that waiting must save before siblings pay a time to first token for it: below
 * this, every sibling writing the shared part itself costs less than a few cents at any
 * current price, while the wait adds a whole time to first token to the fan-out.
 */
export const DEFAULT_MINIMUM_SAVED_TOKENS = 4096;

/** Options of `shouldWaitForFirstSibling`. */
export type SiblingWaitOptions = {
  /** The layout the children's messages were built with. */
  layout: ForkLayout;
  /** Children started from the same assistant message. */
  siblings: number;
  /**
   * Estimated tokens the siblings share after the parent's cached history (see
   * `estimateSiblingSharedTokens`): what each sibling that does not wait writes again.
   */
  sharedTokens: number;
  /** Saved tokens that make waiting worth it (default `DEFAULT_MINIMUM_SAVED_TOKENS`). */
  minimumSavedTokens?: number;
};

function checkCount(name: string, value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `shouldWaitForFirstSibling: ${name} is ${JSON.stringify(value)}; it must be a number, 0 or more.`,
    { details: { [name]: value } },
  );
}

/**
 * Decides from token counts whether siblings 2..N should wait until the first sibling's
 * response has begun (a cache entry is readable only then). Waiting lets each later sibling
 * read the shared part instead of writing it again, saving `(siblings - 1) × sharedTokens`
 * written tokens, at the price of one time to first token for the fan-out. It is worth it
 * when that saving reaches `minimumSavedTokens`. In the `per-child` layout siblings part
 * right after the parent's history, so nothing is shared to wait for: never.
 */
export function shouldWaitForFirstSibling(options: SiblingWaitOptions): boolean {
  checkObject('shouldWaitForFirstSibling()', 'options', options);
  const layout = assertForkLayout(options.layout, 'shouldWaitForFirstSibling');
  const siblings = checkCount('siblings', options.siblings);
  const shared = checkCount('sharedTokens', options.sharedTokens);
  const minimum = checkCount(
    'minimumSavedTokens',
    options.minimumSavedTokens ?? DEFAULT_MINIMUM_SAVED_TOKENS,
  );
  if (layout === 'per-child' || siblings < 2) return false;
  return (siblings - 1) * shared >= minimum;
}

/**
 * Estimates the tokens siblings share after the parent's history, from one child's own
 * messages (those `buildForkChildMessages` returns): every block but the last (the directive
 * line) in `shared-message`, nothing in `per-child`. Uses `ceil(utf8 bytes / 4)` of each
 * block's JSON, a rough stand-in for a tokenizer that errs toward more tokens.
 */
export function estimateSiblingSharedTokens(options: {
  layout: ForkLayout;
  childMessages: readonly BreakpointMessage[];
}): number {
  checkObject('estimateSiblingSharedTokens()', 'options', options);
  const layout = assertForkLayout(options.layout, 'estimateSiblingSharedTokens');
  checkMessages('estimateSiblingSharedTokens()', 'options.childMessages', options.childMessages);
  if (layout === 'per-child') return 0;
  const encoder = new TextEncoder();
  const blocks = options.childMessages.flatMap((message) => [...messageBlocks(message)]);
  return blocks
    .slice(0, -1)
    .reduce(
      (sum: number, block) => sum + Math.ceil(encoder.encode(JSON.stringify(block)).length / 4),
      0,
    );
}
