import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

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

/**
 * The lock key of a file: its path with the longest existing part resolved, so two spellings
 * of one file (a symbolic link to the project, a relative cwd) share one queue, also before
 * the file or its folder exists.
 */
export function pathLockKey(file: string): string {
  const missing: string[] = [];
  let path = file;
  for (;;) {
    try {
      return join(realpathSync.native(path), ...missing.reverse());
    } catch {
      const parent = dirname(path);
      if (parent === path) return file;
      missing.push(basename(path));
      path = parent;
    }
  }
}
