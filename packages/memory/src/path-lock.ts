const queues = new Map<string, Promise<void>>();

/**
 * Runs `task` after every earlier task queued for the same key has settled, so
 * read-modify-write sequences on one file never interleave inside this process.
 */
export async function withPathLock<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  try {
    return await run;
  } finally {
    if (queues.get(key) === tail) queues.delete(key);
  }
}
