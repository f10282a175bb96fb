import { DelegateError } from '@delegate/core';

/** Options of {@link delay}. */
export type DelayOptions = {
  /** Rejects the wait with an `ABORTED` DelegateError when it aborts (at once if it already has). */
  signal?: AbortSignal;
  /** Ends the wait early (resolving) when this settles, either way. */
  until?: Promise<unknown>;
};

/** The error an aborted wait rejects with; `cause` is the signal's reason. */
export function abortedWaitError(signal: AbortSignal): DelegateError {
  return new DelegateError('ABORTED', 'The wait was aborted.', { cause: signal.reason });
}

/**
 * Waits `ms` milliseconds. Resolves early when `until` settles; rejects with an `ABORTED`
 * DelegateError when `signal` aborts (already or later). Leaves no timer or listener behind.
 */
export function delay(ms: number, options: DelayOptions = {}): Promise<void> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(abortedWaitError(signal));
  return new Promise((resolve, reject) => {
    const cleanup = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const done = (): void => {
      cleanup();
      resolve();
    };
    const onAbort = (): void => {
      cleanup();
      reject(abortedWaitError(signal!));
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
    options.until?.then(done, done);
  });
}
