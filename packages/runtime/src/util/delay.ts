/**
 * Waits `ms`, or less when `signal` aborts (already or later) or `until` settles; leaves no
 * timer or listener behind.
 */
export function delay(
  ms: number,
  options: { signal?: AbortSignal; until?: Promise<unknown> } = {},
): Promise<void> {
  return new Promise((resolve) => {
    const { signal } = options;
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    options.until?.then(done, done);
    if (signal?.aborted) done();
  });
}
