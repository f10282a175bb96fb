import { DelegateError } from '@delegate/core';

/** The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Starts the timer of a wait that ends after `timeoutMs`: `Infinity` waits without a limit
 * (no timer), a longer delay than Node's timers hold waits that longest one, and a negative,
 * NaN or non-number timeout is an `INVALID_ARGUMENT` error naming `where`. Returns the function
 * that cancels it.
 */
export function startWaitTimer(options: {
  timeoutMs: number;
  onTimeout: () => void;
  where: string;
}): () => void {
  const { timeoutMs } = options;
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${options.where}: timeoutMs must be a number of milliseconds, 0 or more (Infinity waits without a limit), got ${String(timeoutMs)}.`,
    );
  }
  if (timeoutMs === Number.POSITIVE_INFINITY) return () => {};
  const timer = setTimeout(options.onTimeout, Math.min(timeoutMs, MAX_TIMER_MS));
  return () => clearTimeout(timer);
}
