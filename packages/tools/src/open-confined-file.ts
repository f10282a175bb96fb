import { constants } from 'node:fs';
import { type FileHandle, open, readlink, realpath, stat } from 'node:fs/promises';
import { DelegateError } from '@delegate/core';
import { isPathInside } from './resolve-path-within-roots.js';

/** Options of `openConfinedFile`. */
export type OpenConfinedFileOptions = {
  /** Real path checked by `resolvePathWithinRoots`. */
  realPath: string;
  /** Allowed root (real path) that `realPath` lies in. */
  root: string;
  /** `read` opens read-only; `write` opens for writing without truncating; `create` fails if the file exists. */
  purpose: 'read' | 'write' | 'create';
};

function flagsFor(purpose: OpenConfinedFileOptions['purpose']): number {
  // O_NOFOLLOW: a symlink swapped in for the last component is refused, not followed.
  // O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused as not a regular file).
  const common = constants.O_NOFOLLOW | constants.O_NONBLOCK;
  switch (purpose) {
    case 'read':
      return common | constants.O_RDONLY;
    case 'write':
      return common | constants.O_WRONLY | constants.O_CREAT;
    case 'create':
      return common | constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  }
}

/** Where an open descriptor really points: `/proc/self/fd` on Linux, else a fresh realpath checked against the inode. */
async function locationOf(handle: FileHandle, realPath: string): Promise<string | undefined> {
  const viaProc = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (viaProc !== undefined) return viaProc.replace(/ \(deleted\)$/, '');
  const [opened, again] = await Promise.all([
    handle.stat(),
    realpath(realPath).then(async (path) => ({ path, stats: await stat(path) })),
  ]).catch(() => [undefined, undefined] as const);
  if (opened === undefined || again === undefined) return undefined;
  const same = opened.dev === again.stats.dev && opened.ino === again.stats.ino;
  return same ? again.path : undefined;
}

/**
 * Opens a checked path and verifies, on the open descriptor, that it is a regular file
 * still inside `root`. This closes the gap between the path check and the use: a
 * symlink swapped in for the file or a parent directory after the check is refused
 * (PATH_ESCAPE) before a byte is read or written. FIFOs, sockets and devices are refused
 * (INVALID_ARGUMENT) instead of blocking forever.
 */
export async function openConfinedFile(options: OpenConfinedFileOptions): Promise<FileHandle> {
  const { realPath, root, purpose } = options;
  let handle: FileHandle;
  try {
    handle = await open(realPath, flagsFor(purpose), 0o666);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') {
      throw new DelegateError(
        'PATH_ESCAPE',
        `${realPath} became a symbolic link after it was checked; refusing to follow it. Check the path and retry.`,
        { cause: error, details: { path: realPath } },
      );
    }
    if (code === 'ENXIO') {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${realPath} is not a regular file (a FIFO or socket); only regular files can be used.`,
        { cause: error, details: { path: realPath } },
      );
    }
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) {
      throw new DelegateError('INVALID_ARGUMENT', `${realPath} is a directory, not a file.`, {
        details: { path: realPath },
      });
    }
    if (!stats.isFile()) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${realPath} is not a regular file (a FIFO, socket or device); only regular files can be used.`,
        { details: { path: realPath } },
      );
    }
    const location = await locationOf(handle, realPath);
    if (location === undefined || !isPathInside(location, root)) {
      throw new DelegateError(
        'PATH_ESCAPE',
        `${realPath} moved outside ${root} (a parent directory was replaced by a symbolic link) after it was checked. ` +
          'Check the path and retry.',
        { details: { path: realPath, root, ...(location === undefined ? {} : { location }) } },
      );
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Reads at most `maxBytes` bytes of an open file; `truncated` tells whether more was there. */
export async function readAtMost(
  handle: FileHandle,
  maxBytes: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const size = (await handle.stat()).size;
  let buffer = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) return { bytes: buffer.subarray(0, maxBytes), truncated: true };
      const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
      buffer.copy(bigger, 0, 0, length);
      buffer = bigger;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  if (length > maxBytes) return { bytes: buffer.subarray(0, maxBytes), truncated: true };
  return { bytes: buffer.subarray(0, length), truncated: false };
}
