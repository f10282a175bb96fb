import { timerDelay } from '@delegate/core';

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
  const delay = timerDelay(options.timeoutMs, `${options.where}: timeoutMs`);
  if (delay === undefined) return () => {};
  const timer = setTimeout(options.onTimeout, delay);
  return () => clearTimeout(timer);
}
