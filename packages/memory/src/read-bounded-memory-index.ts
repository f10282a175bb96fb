import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { errorMessage, invalidArgument, checkObject, checkString } from '@delegate/core';
import { systemErrorCode } from './file-system-error.js';
import { SAFE_READ_FLAGS, describeOpenError, hardLinkProblem } from './read-regular-file.js';

/** The default number of MEMORY.md lines put into the prompt. */
export const DEFAULT_MEMORY_INDEX_MAX_LINES = 200;

/** The default number of MEMORY.md bytes put into the prompt (25 KiB). */
export const DEFAULT_MEMORY_INDEX_MAX_BYTES = 25 * 1024;

/** How a MEMORY.md was cut to fit the prompt. */
export interface MemoryIndexTruncation {
  /** Which limit cut it. */
  reason: 'lines' | 'bytes';
  /** The size of the whole file in bytes. */
  totalBytes: number;
  /** The bytes shown. */
  shownBytes: number;
  /** The bytes left out. */
  omittedBytes: number;
  /** The lines shown. */
  shownLines: number;
  /** The number of lines in the whole file, when the whole file was read. */
  totalLines: number | undefined;
}

/** The outcome of reading MEMORY.md for the prompt. */
export type MemoryIndexRead =
  | { status: 'missing' }
  | { status: 'unreadable'; reason: string; error: unknown }
  | { status: 'ok'; text: string; truncation: MemoryIndexTruncation | undefined };

function countLines(buffer: Buffer, end: number): number {
  let lines = 0;
  for (let index = 0; index < end; index++) if (buffer[index] === 0x0a) lines++;
  if (end > 0 && buffer[end - 1] !== 0x0a) lines++;
  return lines;
}

/** Returns `end`, moved back so that it does not cut a UTF-8 character in two. */
function completeCharacterEnd(buffer: Buffer, end: number): number {
  let start = end - 1;
  while (start > 0 && ((buffer[start] ?? 0) & 0xc0) === 0x80) start--;
  if (start < 0) return end;
  const lead = buffer[start] ?? 0;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start + length > end ? start : end;
}

// Bad arguments throw; only problems with the file itself are results.
function checkLimits(file: unknown, limits: unknown): void {
  const where = 'readBoundedMemoryIndex()';
  checkString(where, 'file', file);
  checkObject(where, 'limits', limits);
  for (const name of ['maxLines', 'maxBytes'] as const) {
    const value = (limits as Record<string, unknown>)[name];
    if (typeof value !== 'number' || !(value >= 1)) {
      throw invalidArgument({
        where,
        option: `limits.${name}`,
        expected: 'a number of at least 1',
        value,
      });
    }
  }
}

/**
 * Reads MEMORY.md synchronously, never more than `maxBytes` of it, and cuts it at
 * `maxLines` lines or `maxBytes` bytes (at a line end when there is one, never inside a
 * UTF-8 character). A symbolic link, a FIFO or a device is unreadable: it is never followed
 * or waited on. Never throws for the file: a missing file and an unreadable one are results
 * (a wrong-kind argument throws `INVALID_ARGUMENT`).
 */
export function readBoundedMemoryIndex(
  file: string,
  limits: { maxLines: number; maxBytes: number },
): MemoryIndexRead {
  checkLimits(file, limits);
  let descriptor: number;
  try {
    // Not following a link keeps files outside the memory folder out of the prompt, and not
    // blocking keeps a FIFO from freezing the process (this read is synchronous).
    descriptor = openSync(file, SAFE_READ_FLAGS);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'missing' };
    return { status: 'unreadable', reason: describeOpenError(error) ?? errorMessage(error), error };
  }
  try {
    const stats = fstatSync(descriptor);
    if (!stats.isFile()) {
      return { status: 'unreadable', reason: 'it is not a regular file', error: undefined };
    }
    const linked = hardLinkProblem(stats);
    if (linked !== undefined) return { status: 'unreadable', reason: linked, error: undefined };
    const wanted = Math.min(stats.size, limits.maxBytes);
    const buffer = Buffer.alloc(wanted);
    let read = 0;
    while (read < wanted) {
      const count = readSync(descriptor, buffer, read, wanted - read, read);
      if (count === 0) break;
      read += count;
    }
    const totalBytes = Math.max(stats.size, read);
    const cutByBytes = totalBytes > read;

    let end = read;
    let reason: MemoryIndexTruncation['reason'] | undefined;
    let newlines = 0;
    for (let index = 0; index < read; index++) {
      if (buffer[index] !== 0x0a) continue;
      newlines++;
      if (newlines === limits.maxLines) {
        if (index + 1 < read || cutByBytes) {
          end = index + 1;
          reason = 'lines';
        }
        break;
      }
    }
    if (reason === undefined && cutByBytes) {
      reason = 'bytes';
      const lastNewline = buffer.lastIndexOf(0x0a, read - 1);
      if (lastNewline >= 0) {
        end = lastNewline + 1;
      } else {
        end = completeCharacterEnd(buffer, read);
      }
    }
    const text = buffer.toString('utf8', 0, end);
    if (reason === undefined) return { status: 'ok', text, truncation: undefined };
    return {
      status: 'ok',
      text,
      truncation: {
        reason,
        totalBytes,
        shownBytes: end,
        omittedBytes: totalBytes - end,
        shownLines: countLines(buffer, end),
        totalLines: cutByBytes ? undefined : countLines(buffer, read),
      },
    };
  } catch (error) {
    return { status: 'unreadable', reason: errorMessage(error), error };
  } finally {
    try {
      closeSync(descriptor);
    } catch {
      // Nothing useful to do: the content (or the failure) is already in hand.
    }
  }
}
