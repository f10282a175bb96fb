import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** Returns a function that makes a fresh temp dir; every dir is removed after each test. */
export function useTempDirs(): () => Promise<string> {
  const created: string[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 3 })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delegate-memory-'));
    created.push(dir);
    return dir;
  };
}
