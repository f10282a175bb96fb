import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { systemErrorCode } from './file-system-error.js';

/** Flags that open a file for reading without following a final symbolic link or blocking on a FIFO. */
export const SAFE_READ_FLAGS =
  constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Largest memory file read whole (4 MiB); a bigger MEMORY.md must be trimmed by hand. */
export const MAX_MEMORY_FILE_BYTES = 4 * 1024 * 1024;

/** Explains the error a safe open gives for a symbolic link, or returns the original message. */
export function describeOpenError(error: unknown): string | undefined {
  const code = systemErrorCode(error);
  // O_NOFOLLOW on a link fails with ELOOP (EMLINK on some BSDs).
  if (code === 'ELOOP' || code === 'EMLINK')
    return 'it is a symbolic link, which memory never follows';
  return undefined;
}

/**
 * Why a memory file with more than one hard link is not read: another of its names can lie
 * outside the memory folder (a link made by anyone who can write there), and its text would
 * reach the agent's prompt. Undefined for a file with one name.
 */
export function hardLinkProblem(stats: { nlink: number }): string | undefined {
  return stats.nlink > 1
    ? `it has ${stats.nlink} hard links, and another of its names may lie outside the memory folder, so memory never reads it (copy the file instead of linking it)`
    : undefined;
}

/**
 * Reads a whole memory file as UTF-8, or returns undefined when it does not exist. Throws when
 * the path is a symbolic link, a file with other hard links, a FIFO, a device or a folder, or
 * is over `maxBytes`; it never blocks on a FIFO and never reads through a link to a file
 * outside the memory folder.
 */
export async function readRegularFile(
  file: string,
  maxBytes: number = MAX_MEMORY_FILE_BYTES,
): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(file, SAFE_READ_FLAGS);
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return undefined;
    const reason = describeOpenError(error);
    throw reason === undefined ? error : new Error(reason, { cause: error });
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new Error('it is not a regular file');
    const linked = hardLinkProblem(stats);
    if (linked !== undefined) throw new Error(linked);
    if (stats.size > maxBytes) {
      throw new Error(`it is ${stats.size} bytes, over the ${maxBytes}-byte limit; shorten it`);
    }
    const limit = maxBytes + 1;
    let buffer = Buffer.alloc(Math.min(limit, stats.size + 1));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        // The file grew after the size check: keep reading, but never past the limit.
        if (buffer.length >= limit) break;
        const grown = Buffer.alloc(Math.min(limit, buffer.length * 2));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes)
      throw new Error(`it grew over the ${maxBytes}-byte limit while being read`);
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
  }
}
