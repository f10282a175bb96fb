import { DelegateError } from './errors.js';

/** The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Checks a timeout in milliseconds and returns the delay to give `setTimeout`: `undefined` for
 * `Infinity` (no limit: set no timer), the longest timer Node holds for anything longer, the
 * value itself otherwise. A negative, NaN or non-number value is an `INVALID_ARGUMENT` error
 * naming `where`.
 */
export function timerDelay(timeoutMs: unknown, where: string): number | undefined {
  if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${where} must be a number of milliseconds, 0 or more (Infinity for no limit), got ${String(timeoutMs)}.`,
      { details: { option: where } },
    );
  }
  if (timeoutMs === Number.POSITIVE_INFINITY) return undefined;
  return Math.min(timeoutMs, MAX_TIMER_MS);
}
