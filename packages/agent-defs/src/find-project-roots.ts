import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Returns the directories whose project agents apply to `cwd`, farthest first: every
 * directory from the repository root (the nearest ancestor holding `.git`) down to `cwd`,
 * or only `cwd` when no ancestor holds `.git`.
 */
export async function findProjectRoots(cwd: string): Promise<string[]> {
  const start = resolve(cwd);
  const chain: string[] = [];
  let current = start;
  for (;;) {
    chain.push(current);
    if (await exists(join(current, '.git'))) return chain.reverse();
    const parent = dirname(current);
    if (parent === current) return [start];
    current = parent;
  }
}
