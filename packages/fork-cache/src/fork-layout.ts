import { DelegateError } from '@delegate/core';

/**
 * How a fork child's copy of the parent's assistant turn is laid out:
 * `shared-message` keeps the whole assistant message (every sibling's `tool_use`) and answers
 * each call with the same placeholder, so siblings share everything up to their own
 * directive line; `per-child` keeps only the child's own `tool_use` (and the turn's thinking
 * and text), so siblings part right after the text and each writes its own short tail.
 */
export type ForkLayout = 'shared-message' | 'per-child';

/** Every `ForkLayout`, for validation and for benchmarks that try each. */
export const FORK_LAYOUTS: readonly ForkLayout[] = ['shared-message', 'per-child'];

/** The layout used when none is given. */
export const DEFAULT_FORK_LAYOUT: ForkLayout = 'shared-message';

/** Throws `INVALID_ARGUMENT` unless `layout` is a known fork layout. */
export function assertForkLayout(layout: unknown, where: string): ForkLayout {
  if (FORK_LAYOUTS.includes(layout as ForkLayout)) return layout as ForkLayout;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${where}: forkLayout is ${JSON.stringify(layout)}; use one of ${FORK_LAYOUTS.map((name) => `'${name}'`).join(', ')}.`,
    { details: { forkLayout: layout } },
  );
}
