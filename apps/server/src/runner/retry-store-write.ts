/** First pause after a failed store write, in ms (doubled after each further failure). */
const FIRST_PAUSE_MS = 500;
/** Longest pause between two attempts, in ms. */
const LONGEST_PAUSE_MS = 10_000;

/** Resolves after `ms`, or rejects with `signal`'s reason once it aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `write` until it succeeds (the store may be down for a while): after a failure it waits
 * 0.5 s, then twice as long after each further one (at most 10 s), and calls `onFailure` with
 * the error and the attempt's number. Once `signal` aborts it stops and rejects with the last
 * error (or the abort reason when no attempt failed yet).
 */
export async function retryStoreWrite<T>(options: {
  write: () => Promise<T>;
  signal: AbortSignal;
  onFailure?: (error: unknown, attempt: number) => void;
}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await options.write();
    } catch (error) {
      options.onFailure?.(error, attempt);
      if (options.signal.aborted) throw error;
      try {
        await pause(
          Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (attempt - 1)),
          options.signal,
        );
      } catch {
        throw error;
      }
    }
  }
}
