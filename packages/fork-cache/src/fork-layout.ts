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

/**
 * The layout used when none is given: `per-child`, the one that measured best in
 * `bench/src/fork-cache.bench.ts` once the worker rules sit in the parent's prefix (see the
 * package README): its children need no wait for a sibling, so a fan-out takes about the
 * time of as many background agents, and each child writes only its own call, placeholder,
 * rules notice and directive line, whatever the number of siblings.
 */
export const DEFAULT_FORK_LAYOUT: ForkLayout = 'per-child';

/** Throws `INVALID_ARGUMENT` unless `layout` is a known fork layout. */
export function assertForkLayout(layout: unknown, where: string): ForkLayout {
  if (FORK_LAYOUTS.includes(layout as ForkLayout)) return layout as ForkLayout;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${where}: forkLayout is ${JSON.stringify(layout)}; use one of ${FORK_LAYOUTS.map((name) => `'${name}'`).join(', ')}.`,
    { details: { forkLayout: layout } },
  );
}
