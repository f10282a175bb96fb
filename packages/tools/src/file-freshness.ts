import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { DelegateError, type FileState, type FileStateCache } from '@delegate/core';
import { hasSystemCode } from './file-system-error.js';
import { openConfinedFileWithStats, readAtMost } from './open-confined-file.js';
import { hashContent } from './text-file.js';

/** Largest existing file Edit loads to change it (256 MiB); Write hashes any size without loading it. */
export const MAX_EDITABLE_FILE_BYTES = 256 * 1024 * 1024;

/** What is on disk now, for a file about to be changed. */
export type CurrentFile = {
  /** Bytes on disk, when the caller asked for them (`load`). */
  bytes?: Buffer;
  /** Size in bytes. */
  size: number;
  /** Modification time, ms since epoch. */
  mtimeMs: number;
};

const hashChunkBytes = 1024 * 1024;

/** SHA-256 of a file read through its descriptor in chunks, so that any size costs 1 MiB of memory. */
async function hashFile(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  const chunk = Buffer.allocUnsafe(hashChunkBytes);
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    hash.update(chunk.subarray(0, bytesRead));
  }
  return hash.digest('hex');
}

/** What the last read recorded; refuses a file never read in this context, or (for whole-file overwrites) only partly read. */
function assertFileWasRead(options: {
  absolutePath: string;
  known: FileState | undefined;
  toolName: string;
  requireFullRead: boolean;
}): FileState {
  const { absolutePath, known, toolName } = options;
  if (known === undefined) {
    throw new DelegateError(
      'FILE_STALE',
      `${toolName} refused: ${absolutePath} exists but has not been read in this conversation. ` +
        'Read it first, then retry.',
      { details: { path: absolutePath, tool: toolName, reason: 'not-read' } },
    );
  }
  if (options.requireFullRead && known.isPartialView === true) {
    throw new DelegateError(
      'FILE_STALE',
      `${toolName} refused: only part of ${absolutePath} was read (offset/limit), so overwriting it would ` +
        'drop lines that were never seen. Use Edit to change part of it, or Read the whole file first.',
      { details: { path: absolutePath, tool: toolName, reason: 'partial-read' } },
    );
  }
  return known;
}

function tooLarge(options: {
  absolutePath: string;
  size: number;
  toolName: string;
}): DelegateError {
  const { absolutePath, size, toolName } = options;
  return new DelegateError(
    'LIMIT_EXCEEDED',
    `${toolName} refused: ${absolutePath} is ${size} bytes, over the ${MAX_EDITABLE_FILE_BYTES}-byte limit ` +
      `of files ${toolName} loads to change. Change it with a command through Bash (sed, a script), or split it.`,
    {
      details: { path: absolutePath, tool: toolName, size, maxBytes: MAX_EDITABLE_FILE_BYTES },
    },
  );
}

/**
 * Checks an existing file before a tool changes it, through `openConfinedFile`, and returns
 * what is on disk (undefined when the file does not exist). Refuses (`FILE_STALE`) a file that
 * was never read in this context, one only partly read when `requireFullRead`, and one whose
 * bytes changed since the read; a file whose mtime moved but whose bytes still hash the same
 * is accepted. These checks need no bytes, or hash the file in chunks. With `load`, the bytes
 * are returned too, and a file over `MAX_EDITABLE_FILE_BYTES` is refused (`LIMIT_EXCEEDED`)
 * before any is read.
 */
export async function checkCurrentFile(options: {
  realPath: string;
  root: string;
  absolutePath: string;
  cache: FileStateCache;
  toolName: string;
  /** Also refuse when the last read showed only part of the file (for whole-file overwrites). */
  requireFullRead?: boolean;
  /** Return the file's bytes (for Edit). */
  load?: boolean;
}): Promise<CurrentFile | undefined> {
  const { absolutePath, toolName } = options;
  let opened;
  try {
    opened = await openConfinedFileWithStats({
      realPath: options.realPath,
      root: options.root,
      purpose: 'read',
    });
  } catch (error) {
    if (hasSystemCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  const { handle, stats } = opened;
  try {
    const known = assertFileWasRead({
      absolutePath,
      known: options.cache.get(absolutePath),
      toolName,
      requireFullRead: options.requireFullRead === true,
    });
    let bytes: Buffer | undefined;
    let contentHash: string | undefined;
    if (options.load === true) {
      if (stats.size > MAX_EDITABLE_FILE_BYTES)
        throw tooLarge({ absolutePath, size: stats.size, toolName });
      const read = await readAtMost(handle, MAX_EDITABLE_FILE_BYTES, stats.size);
      if (read.truncated)
        throw tooLarge({ absolutePath, size: (await handle.stat()).size, toolName });
      bytes = read.bytes;
      contentHash = known.contentHash === undefined ? undefined : hashContent(bytes);
    } else if (known.contentHash !== undefined) {
      contentHash = await hashFile(handle);
    }
    const unchanged =
      known.contentHash === undefined
        ? known.timestamp === stats.mtimeMs
        : known.contentHash === contentHash;
    if (!unchanged) {
      throw new DelegateError(
        'FILE_STALE',
        `${toolName} refused: ${absolutePath} changed on disk since it was last read ` +
          '(by the user, a linter or another agent). Read it again, then retry.',
        { details: { path: absolutePath, tool: toolName, reason: 'modified' } },
      );
    }
    return { ...(bytes === undefined ? {} : { bytes }), size: stats.size, mtimeMs: stats.mtimeMs };
  } finally {
    await handle.close();
  }
}
