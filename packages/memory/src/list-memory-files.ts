import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { fileSystemError, systemErrorCode } from './file-system-error.js';
import { type MemoryFolder } from './open-memory-folder.js';
import { TEMPORARY_FILE_PATTERN } from './write-file-atomic.js';

/** One file in an agent's memory folder. */
export interface MemoryFile {
  /** The path relative to the memory folder, with `/` between segments. */
  path: string;
  /** The size in bytes. */
  size: number;
}

/** Opens a subfolder to list, or undefined when it is gone or is (or became) a link. */
function openSubfolder(folder: MemoryFolder, name: string): MemoryFolder | undefined {
  try {
    return folder.child(name);
  } catch (error) {
    if (DelegateError.hasCode(error, 'PATH_ESCAPE')) return undefined;
    throw fileSystemError({ action: 'list the memory folder', path: folder.shown, cause: error });
  }
}

async function collect(folder: MemoryFolder, prefix: string, files: MemoryFile[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(folder.at(), { withFileTypes: true });
  } catch (error) {
    const code = systemErrorCode(error);
    // A folder removed while we walk it simply has no files.
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    throw fileSystemError({ action: 'list the memory folder', path: folder.shown, cause: error });
  }
  for (const entry of entries) {
    const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      const inner = openSubfolder(folder, entry.name);
      if (inner === undefined) continue;
      try {
        await collect(inner, path, files);
      } finally {
        inner.close();
      }
    } else if (entry.isFile() && !TEMPORARY_FILE_PATTERN.test(entry.name)) {
      try {
        const stats = await lstat(folder.at(entry.name));
        if (stats.isFile()) files.push({ path, size: stats.size });
      } catch (error) {
        if (systemErrorCode(error) !== 'ENOENT') {
          throw fileSystemError({
            action: 'read the size of',
            path: join(folder.shown, entry.name),
            cause: error,
          });
        }
      }
    }
  }
}

/**
 * Lists the regular files under a memory folder held open (recursively, in-flight temporary
 * files skipped), sorted by path. Each subfolder is opened inside its parent without
 * following a link, so symbolic links are skipped, also one swapped in while it lists.
 */
export async function listMemoryFiles(folder: MemoryFolder): Promise<MemoryFile[]> {
  const files: MemoryFile[] = [];
  await collect(folder, '', files);
  return files.sort((left, right) =>
    left.path < right.path ? -1 : left.path > right.path ? 1 : 0,
  );
}
