import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileSystemError, systemErrorCode } from './file-system-error.js';
import { TEMPORARY_FILE_PATTERN } from './write-file-atomic.js';

/** One file in an agent's memory folder. */
export interface MemoryFile {
  /** The path relative to the memory folder, with `/` between segments. */
  path: string;
  /** The size in bytes. */
  size: number;
}

/**
 * Lists the regular files under a memory folder (recursively, symbolic links not
 * followed, in-flight temporary files skipped), sorted by path. A missing folder gives [].
 */
export async function listMemoryFiles(directory: string): Promise<MemoryFile[]> {
  const files: MemoryFile[] = [];
  const pending: string[] = [''];
  while (pending.length > 0) {
    const relative = pending.pop() ?? '';
    const absolute = relative === '' ? directory : join(directory, ...relative.split('/'));
    let entries;
    try {
      entries = await readdir(absolute, { withFileTypes: true });
    } catch (error) {
      const code = systemErrorCode(error);
      // A folder removed while we walk it simply has no files.
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw fileSystemError({ action: 'list the memory folder', path: absolute, cause: error });
    }
    for (const entry of entries) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        pending.push(path);
      } else if (entry.isFile() && !TEMPORARY_FILE_PATTERN.test(entry.name)) {
        try {
          const stats = await lstat(join(absolute, entry.name));
          files.push({ path, size: stats.size });
        } catch (error) {
          if (systemErrorCode(error) !== 'ENOENT') {
            throw fileSystemError({
              action: 'read the size of',
              path: join(absolute, entry.name),
              cause: error,
            });
          }
        }
      }
    }
  }
  return files.sort((left, right) =>
    left.path < right.path ? -1 : left.path > right.path ? 1 : 0,
  );
}
