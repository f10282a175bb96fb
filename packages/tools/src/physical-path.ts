import { lstatSync, readlinkSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

const maxSymlinkHops = 40;

function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function componentsOf(path: string): string[] {
  return path.split('/').filter((part) => part !== '' && part !== '.');
}

/**
 * Resolves `path` as the kernel does when a program opens it: component by component,
 * following each symbolic link as it is met and applying `..` to the folder reached so far,
 * so `link/../x` is `x` beside the link's target, not beside the link (`path.resolve` and
 * `fs.realpathSync` apply `..` to the text first). A relative `path` starts at `base`, which
 * must be an absolute path without links (a real path). A missing tail is appended as
 * written, and a dangling link is followed to where it points; a `..` after a missing or
 * non-folder component throws, as does a loop of links.
 */
export function physicalPathSync(options: { base: string; path: string }): string {
  const { path } = options;
  if (path.includes('\0')) throw new Error(`${JSON.stringify(path)} holds a NUL byte`);
  let current = isAbsolute(path) ? '/' : options.base;
  const pending = componentsOf(path).reverse();
  let hops = 0;
  for (let part = pending.pop(); part !== undefined; part = pending.pop()) {
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    let stats;
    try {
      stats = lstatSync(next);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      stats = undefined;
    }
    if (stats?.isSymbolicLink() === true) {
      hops++;
      if (hops > maxSymlinkHops) throw new Error(`too many symbolic links at ${next}`);
      const target = readlinkSync(next);
      if (isAbsolute(target)) current = '/';
      pending.push(...componentsOf(target).reverse());
      continue;
    }
    if (stats === undefined || (!stats.isDirectory() && pending.length > 0)) {
      const rest = pending.reverse();
      if (rest.includes('..')) {
        const what = stats === undefined ? 'does not exist' : 'is not a folder';
        throw new Error(`${next} ${what}, so the .. after it cannot be followed`);
      }
      return join(next, ...rest);
    }
    current = next;
  }
  return current;
}
