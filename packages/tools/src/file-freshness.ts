import { readFile, stat } from 'node:fs/promises';
import { DelegateError, type FileState, type FileStateCache } from '@delegate/core';
import { hashContent } from './text-file.js';

/** What is on disk now, for a file about to be overwritten. */
export type CurrentFile = {
  /** Bytes on disk. */
  bytes: Buffer;
  /** Modification time, ms since epoch. */
  mtimeMs: number;
};

/** Reads a file's bytes and mtime, or returns undefined when it does not exist. */
export async function readCurrentFile(realPath: string): Promise<CurrentFile | undefined> {
  try {
    const [stats, bytes] = await Promise.all([stat(realPath), readFile(realPath)]);
    if (stats.isDirectory()) {
      throw new DelegateError('INVALID_ARGUMENT', `${realPath} is a directory, not a file.`, {
        details: { path: realPath },
      });
    }
    return { bytes, mtimeMs: stats.mtimeMs };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') {
      throw new DelegateError('INVALID_ARGUMENT', `${realPath} is a directory, not a file.`, {
        cause: error,
        details: { path: realPath },
      });
    }
    throw error;
  }
}

/**
 * Refuses to change an existing file that was never read, or that changed on disk since
 * it was read. A file whose mtime moved but whose bytes still hash the same as when it
 * was read is accepted: what the model saw is still what is there.
 */
export function assertFileIsFresh(options: {
  absolutePath: string;
  current: CurrentFile;
  cache: FileStateCache;
  toolName: string;
}): void {
  const { absolutePath, current, cache, toolName } = options;
  const known: FileState | undefined = cache.get(absolutePath);
  if (known === undefined) {
    throw new DelegateError(
      'FILE_STALE',
      `${toolName} refused: ${absolutePath} exists but has not been read in this conversation. ` +
        'Read it first, then retry.',
      { details: { path: absolutePath, tool: toolName, reason: 'not-read' } },
    );
  }
  const hashMatches =
    known.contentHash !== undefined && known.contentHash === hashContent(current.bytes);
  const mtimeMatches = known.timestamp === current.mtimeMs;
  const unchanged = known.contentHash === undefined ? mtimeMatches : hashMatches;
  if (!unchanged) {
    throw new DelegateError(
      'FILE_STALE',
      `${toolName} refused: ${absolutePath} changed on disk since it was last read ` +
        '(by the user, a linter or another agent). Read it again, then retry.',
      { details: { path: absolutePath, tool: toolName, reason: 'modified' } },
    );
  }
}
