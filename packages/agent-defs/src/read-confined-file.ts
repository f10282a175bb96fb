import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** The bytes of a file read by {@link readConfinedFile}, or why it was not read. */
export type ConfinedRead =
  | { ok: true; bytes: Buffer }
  | {
      ok: false;
      /** `missing` (no such file), `not-a-file` (FIFO, device, socket, directory), `too-large`, or `unreadable`. */
      code: 'missing' | 'not-a-file' | 'too-large' | 'unreadable';
      /** What went wrong, for a diagnostic; it names no file content. */
      reason: string;
    };

/** Options of {@link readConfinedFile}. */
export type ReadConfinedFileOptions = {
  /** Most bytes accepted; a larger file is refused without reading past this. */
  maxBytes: number;
};

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function readAll(descriptor: number, size: number, maxBytes: number): Buffer | undefined {
  // Never more than the limit: some files (under /proc) report a size of 0 and stream more,
  // and a file may grow after the size check.
  const limit = maxBytes + 1;
  let buffer = Buffer.allocUnsafe(Math.min(limit, Math.max(size + 1, 4096)));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (buffer.length >= limit) break;
      const grown = Buffer.allocUnsafe(Math.min(limit, buffer.length * 2));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const read = readSync(descriptor, buffer, length, buffer.length - length, null);
    if (read === 0) break;
    length += read;
  }
  return length > maxBytes ? undefined : buffer.subarray(0, length);
}

/**
 * Reads a file from a folder Delegate does not control (a project, a home, a plugin) safely:
 * only a regular file is read, it is opened non-blocking (a FIFO never hangs the process)
 * and checked after opening (a file swapped for a FIFO or a device such as /dev/zero is
 * refused), and at most `maxBytes` are read. Synchronous: reading a small regular file this
 * way is several times faster than through promises. Never throws.
 */
export function readConfinedFile(path: string, options: ReadConfinedFileOptions): ConfinedRead {
  let descriptor: number;
  try {
    descriptor = openSync(path, OPEN_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return { ok: false, code: 'missing', reason: 'does not exist' };
    }
    return { ok: false, code: 'unreadable', reason: `could not be opened (${code ?? 'error'})` };
  }
  try {
    const stats = fstatSync(descriptor);
    if (!stats.isFile()) {
      return {
        ok: false,
        code: 'not-a-file',
        reason:
          'is not a regular file (a FIFO, a device, a socket or a directory); only plain files are read',
      };
    }
    if (stats.size > options.maxBytes) {
      return {
        ok: false,
        code: 'too-large',
        reason: `is ${stats.size} bytes, over the ${options.maxBytes}-byte limit`,
      };
    }
    const bytes = readAll(descriptor, stats.size, options.maxBytes);
    if (bytes === undefined) {
      return { ok: false, code: 'too-large', reason: `is over the ${options.maxBytes}-byte limit` };
    }
    return { ok: true, bytes };
  } catch (error) {
    return {
      ok: false,
      code: 'unreadable',
      reason: `could not be read (${errorCode(error) ?? 'error'})`,
    };
  } finally {
    closeSync(descriptor);
  }
}
