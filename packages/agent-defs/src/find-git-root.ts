import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { readConfinedFile } from './read-confined-file.js';

/** Largest `.git`, `commondir` or `gitdir` file read while finding a worktree's main checkout. */
const MAX_GIT_POINTER_BYTES = 4096;

/** Whether anything stands at `path` (links followed). */
export function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The real path of `path`, or `path` itself when it cannot be resolved. */
export function realPathOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

function readText(path: string): string | undefined {
  const read = readConfinedFile(path, { maxBytes: MAX_GIT_POINTER_BYTES });
  return read.ok ? read.bytes.toString('utf8').trim() : undefined;
}

/**
 * The root of the git repository `start` is in: the nearest directory, `start` included,
 * that holds a `.git` entry (a folder, or the file a linked worktree or a submodule has), or
 * `undefined` when no ancestor holds one.
 */
export function findGitRoot(start: string): string | undefined {
  for (let current = resolve(start); ; current = dirname(current)) {
    if (exists(join(current, '.git'))) return current;
    if (dirname(current) === current) return undefined;
  }
}

/**
 * The main checkout of a linked worktree (made by `git worktree add`) whose root is
 * `gitRoot`, or `undefined` when `gitRoot` is not one. The worktree's `.git` file must point
 * to `<main>/.git/worktrees/<name>`, and that folder must point back to the worktree's `.git`
 * (as git writes them), so a hand-made `.git` file cannot make another folder the main checkout.
 */
export function findMainCheckout(gitRoot: string): string | undefined {
  const pointer = readText(join(gitRoot, '.git'));
  if (pointer === undefined || !pointer.startsWith('gitdir:')) return undefined;
  const worktreeGitDir = resolve(gitRoot, pointer.slice('gitdir:'.length).trim());
  const common = readText(join(worktreeGitDir, 'commondir'));
  const backLink = readText(join(worktreeGitDir, 'gitdir'));
  if (common === undefined || backLink === undefined) return undefined;
  const commonDir = resolve(worktreeGitDir, common);
  if (realPathOrSelf(dirname(worktreeGitDir)) !== realPathOrSelf(join(commonDir, 'worktrees')))
    return undefined;
  if (realPathOrSelf(resolve(worktreeGitDir, backLink)) !== join(realPathOrSelf(gitRoot), '.git'))
    return undefined;
  // A bare repository has no checkout to read agents from.
  if (basename(commonDir) !== '.git') return undefined;
  const main = dirname(commonDir);
  return realPathOrSelf(main) === realPathOrSelf(gitRoot) ? undefined : main;
}
