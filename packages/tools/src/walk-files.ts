import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ignore } from 'ignore';
import { DelegateError } from '@delegate/core';
import { readDirectoryInside } from './confined-directory.js';
import { readAtMost } from './open-confined-file.js';

/** A file found by `walkFiles`. */
export type WalkedFile = {
  /** Absolute path. */
  path: string;
  /** Path relative to the walk root, `/`-separated. */
  relativePath: string;
};

/** Options of `walkFiles`. */
export type WalkFilesOptions = {
  /** Directory to walk. */
  root: string;
  /** Directory names never entered (default: `.git` and `node_modules`). */
  skipDirectoryNames?: ReadonlySet<string>;
  /** Honour `.gitignore` files, nested ones included (default false). */
  respectGitignore?: boolean;
  /** Return false to skip a directory (relative path) and all below it. */
  shouldEnterDirectory?: (relativePath: string) => boolean;
  /** Stops the walk with an ABORTED error. */
  signal?: AbortSignal;
  /** Directories read at the same time (default 32). */
  concurrency?: number;
  /**
   * Real path every listed directory must lie in (default: `root`). A directory swapped
   * for a symbolic link while the walk runs is skipped, never followed out of it.
   */
  confineTo?: string;
};

/** Directory names skipped by default. */
export const DEFAULT_SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules']);

const maxGitignoreBytes = 1024 * 1024;

/** Reads a `.gitignore` without following a symbolic link or blocking on a FIFO; '' when unusable. */
async function readGitignore(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return '';
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > maxGitignoreBytes) return '';
    return (await readAtMost(handle, maxGitignoreBytes, stats.size)).bytes.toString('utf8');
  } catch {
    return '';
  } finally {
    await handle.close();
  }
}

type IgnoreLayer = { base: string; matcher: Ignore };
type DirectoryJob = { path: string; relativePath: string; layers: IgnoreLayer[] };

function isIgnored(
  layers: readonly IgnoreLayer[],
  relativePath: string,
  isDirectory: boolean,
): boolean {
  let ignored = false;
  for (const layer of layers) {
    const local = layer.base === '' ? relativePath : relativePath.slice(layer.base.length + 1);
    const result = layer.matcher.test(isDirectory ? `${local}/` : local);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/**
 * Lists every regular file below `root` with bounded concurrency. Symbolic links are
 * not followed (no loops, no escapes), also when a directory is swapped for one while
 * the walk runs: each directory is listed through a descriptor checked to lie inside
 * `confineTo`. Skipped and git-ignored directories are not entered at all.
 */
export async function walkFiles(options: WalkFilesOptions): Promise<WalkedFile[]> {
  const skip = options.skipDirectoryNames ?? DEFAULT_SKIPPED_DIRECTORIES;
  const concurrency = Math.max(1, options.concurrency ?? 32);
  const files: WalkedFile[] = [];
  const queue: DirectoryJob[] = [{ path: options.root, relativePath: '', layers: [] }];
  const confineTo = options.confineTo ?? options.root;

  const processDirectory = async (job: DirectoryJob): Promise<void> => {
    if (options.signal?.aborted) {
      throw new DelegateError('ABORTED', `Walking ${options.root} was aborted.`);
    }
    // Unreadable, vanished or swapped-out directories are skipped, as grep -r skips the first two.
    const entries = await readDirectoryInside({ path: job.path, root: confineTo });
    if (entries === undefined) return;
    let layers = job.layers;
    if (
      options.respectGitignore === true &&
      entries.some((entry) => entry.name === '.gitignore' && entry.isFile())
    ) {
      const rules = await readGitignore(join(job.path, '.gitignore'));
      const { default: ignore } = await import('ignore');
      layers = [...layers, { base: job.relativePath, matcher: ignore().add(rules) }];
    }
    for (const entry of entries) {
      const relativePath =
        job.relativePath === '' ? entry.name : `${job.relativePath}/${entry.name}`;
      if (entry.isDirectory()) {
        if (skip.has(entry.name)) continue;
        if (layers.length > 0 && isIgnored(layers, relativePath, true)) continue;
        if (options.shouldEnterDirectory && !options.shouldEnterDirectory(relativePath)) continue;
        queue.push({ path: join(job.path, entry.name), relativePath, layers });
      } else if (entry.isFile()) {
        if (layers.length > 0 && isIgnored(layers, relativePath, false)) continue;
        files.push({ path: join(job.path, entry.name), relativePath });
      }
    }
  };

  await new Promise<void>((resolve, reject) => {
    let active = 0;
    let failed = false;
    const pump = (): void => {
      if (failed) return;
      if (queue.length === 0 && active === 0) {
        resolve();
        return;
      }
      while (active < concurrency && queue.length > 0) {
        const job = queue.pop();
        if (job === undefined) break;
        active++;
        processDirectory(job).then(
          () => {
            active--;
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
    };
    pump();
  });
  return files;
}
