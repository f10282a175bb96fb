import { DelegateError, type FileState, type FileStateCache } from '@delegate/core';
import { hasSystemCode } from './file-system-error.js';
import { openConfinedFileWithStats, readAtMost } from './open-confined-file.js';
import { hashContent } from './text-file.js';

/** What is on disk now, for a file about to be overwritten. */
export type CurrentFile = {
  /** Bytes on disk. */
  bytes: Buffer;
  /** Modification time, ms since epoch. */
  mtimeMs: number;
};

/** Reads a checked file's bytes and mtime through `openConfinedFile`, or returns undefined when it does not exist. */
export async function readCurrentFile(options: {
  realPath: string;
  root: string;
}): Promise<CurrentFile | undefined> {
  let opened;
  try {
    opened = await openConfinedFileWithStats({ ...options, purpose: 'read' });
  } catch (error) {
    if (hasSystemCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  const { handle, stats } = opened;
  try {
    const { bytes } = await readAtMost(handle, Number.MAX_SAFE_INTEGER, stats.size);
    return { bytes, mtimeMs: stats.mtimeMs };
  } finally {
    await handle.close();
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
  /** Also refuse when the last read showed only part of the file (for whole-file overwrites). */
  requireFullRead?: boolean;
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
  if (options.requireFullRead === true && known.isPartialView === true) {
    throw new DelegateError(
      'FILE_STALE',
      `${toolName} refused: only part of ${absolutePath} was read (offset/limit), so overwriting it would ` +
        'drop lines that were never seen. Use Edit to change part of it, or Read the whole file first.',
      { details: { path: absolutePath, tool: toolName, reason: 'partial-read' } },
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
