import { DelegateError } from '@delegate/core';

/** Runs async work with at most a fixed number of tasks in flight. */
export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

/** Creates a limiter that lets at most `concurrency` tasks run at once, starting them in call order. */
export function createLimiter(concurrency: number): Limiter {
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `concurrency must be a positive whole number, got ${String(concurrency)}; pass 1 or more`,
    );
  }
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    active -= 1;
    waiting.shift()?.();
  };
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await task();
    } finally {
      release();
    }
  };
}
