import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, unlink } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { DelegateError } from '@delegate/core';
import { makeDirectoriesInside } from './confined-directory.js';
import { descriptorLocation, hasProcDescriptors, pathInDescriptor } from './descriptor-location.js';
import { hasSystemCode, toFileSystemError } from './file-system-error.js';
import { isPathInside } from './resolve-path-within-roots.js';

/** Options of `openConfinedFile`. */
export type OpenConfinedFileOptions = {
  /** Real path checked by `resolvePathWithinRoots`. */
  realPath: string;
  /** Allowed root (real path) that `realPath` lies in. */
  root: string;
  /**
   * `read` opens read-only; `write` opens an existing file for writing without truncating;
   * `create` makes a new file (and its missing parent directories) and fails if it exists.
   */
  purpose: 'read' | 'write' | 'create';
  /**
   * Accept a regular file with more than one hard link (default false). Another name of
   * the same file may lie outside the root, so reading it would show, and writing it would
   * change, a file outside.
   */
  allowHardLinks?: boolean;
};

/** An open, checked file and what `fstat` said about it when it was opened. */
export type ConfinedFile = {
  /** The open file. Close it when done. */
  handle: FileHandle;
  /** Its `fstat` right after opening. */
  stats: Stats;
};

// O_NOFOLLOW: a symlink swapped in for the last component is refused, not followed.
// O_NONBLOCK: opening a FIFO does not wait for a writer (it is then refused as not a regular file).
const common = constants.O_NOFOLLOW | constants.O_NONBLOCK;
const flags = {
  read: common | constants.O_RDONLY,
  write: common | constants.O_WRONLY,
  create: common | constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
} as const;

function openError(error: unknown, realPath: string): unknown {
  if (hasSystemCode(error, 'ELOOP') || hasSystemCode(error, 'EMLINK')) {
    return new DelegateError(
      'PATH_ESCAPE',
      `${realPath} became a symbolic link after it was checked; refusing to follow it. Check the path and retry.`,
      { cause: error, details: { path: realPath } },
    );
  }
  if (hasSystemCode(error, 'ENXIO')) {
    return new DelegateError(
      'INVALID_ARGUMENT',
      `${realPath} is not a regular file (a FIFO or socket); only regular files can be used.`,
      { cause: error, details: { path: realPath } },
    );
  }
  return toFileSystemError(error, realPath);
}

/** Opens the file; a new one is created inside its checked parent directory's descriptor. */
async function openFile(options: OpenConfinedFileOptions): Promise<FileHandle> {
  const { realPath, root, purpose } = options;
  if (purpose !== 'create') return open(realPath, flags[purpose]);
  const parent = await makeDirectoriesInside({ realPath: dirname(realPath), root });
  try {
    const target = hasProcDescriptors() ? pathInDescriptor(parent, basename(realPath)) : realPath;
    return await open(target, flags.create, 0o666);
  } finally {
    await parent.close();
  }
}

/** Removes a file this call created outside the root, if it is still the same file. */
async function removeCreated(handle: FileHandle, location: string | undefined): Promise<void> {
  if (location === undefined) return;
  const [opened, there] = await Promise.all([handle.stat(), lstat(location)]).catch(() => []);
  if (
    opened !== undefined &&
    there !== undefined &&
    opened.ino === there.ino &&
    opened.dev === there.dev
  ) {
    await unlink(location).catch(() => undefined);
  }
}

function checkKind(stats: Stats, realPath: string): void {
  if (stats.isDirectory()) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${realPath} is a directory, not a file. Use Glob to list its files or Bash \`ls\` to look at it.`,
      {
        details: { path: realPath },
      },
    );
  }
  if (!stats.isFile()) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${realPath} is not a regular file (a FIFO, socket or device); only regular files can be used.`,
      { details: { path: realPath } },
    );
  }
}

function checkHardLinks(stats: Stats, options: OpenConfinedFileOptions): void {
  if (options.allowHardLinks === true || stats.nlink <= 1) return;
  throw new DelegateError(
    'PATH_ESCAPE',
    `${options.realPath} has ${stats.nlink} hard links, and file tools refuse such files: another ` +
      `name of the same file may lie outside ${options.root}, and there is no way to check where. ` +
      'Copy it to a new file (cp) and use the copy.',
    { details: { path: options.realPath, root: options.root, hardLinks: stats.nlink } },
  );
}

/**
 * Opens a checked path and verifies, on the open descriptor, that it is a regular file
 * still inside `root` with no other hard links (unless `allowHardLinks`). This closes the
 * gap between the path check and the use: a symlink swapped in for the file or a parent
 * directory after the check is refused (PATH_ESCAPE) before a byte is read or written,
 * and a file created outside in that instant is removed again. A new file (`create`) is
 * made with its missing parent directories inside the checked parent's descriptor on
 * Linux, so nothing appears outside. FIFOs, sockets and devices are refused
 * (INVALID_ARGUMENT) instead of blocking forever; other failures are DelegateErrors that
 * name the path. Returns the handle with its `fstat`.
 */
export async function openConfinedFileWithStats(
  options: OpenConfinedFileOptions,
): Promise<ConfinedFile> {
  const { realPath, root, purpose } = options;
  let handle: FileHandle;
  try {
    handle = await openFile(options);
  } catch (error) {
    throw openError(error, realPath);
  }
  let location: string | undefined;
  try {
    const stats = await handle.stat();
    checkKind(stats, realPath);
    location = await descriptorLocation(handle, realPath);
    if (location === undefined || !isPathInside(location, root)) {
      if (purpose === 'create') await removeCreated(handle, location);
      throw new DelegateError(
        'PATH_ESCAPE',
        `${realPath} moved outside ${root} (a parent directory was replaced by a symbolic link) after it was checked. ` +
          'Check the path and retry.',
        { details: { path: realPath, root, ...(location === undefined ? {} : { location }) } },
      );
    }
    checkHardLinks(stats, options);
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw toFileSystemError(error, realPath);
  }
}

/** Opens a checked path like `openConfinedFileWithStats` and returns only the handle. */
export async function openConfinedFile(options: OpenConfinedFileOptions): Promise<FileHandle> {
  return (await openConfinedFileWithStats(options)).handle;
}

/**
 * Reads at most `maxBytes` bytes of an open file; `truncated` tells whether more was
 * there. `knownSize` (the `fstat` size) lets a file that did not grow be read in one call.
 */
export async function readAtMost(
  handle: FileHandle,
  maxBytes: number,
  knownSize?: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const size = knownSize ?? (await handle.stat()).size;
  let buffer = Buffer.allocUnsafe(Math.min(size, maxBytes) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > maxBytes) return { bytes: buffer.subarray(0, maxBytes), truncated: true };
      const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
      buffer.copy(bigger, 0, 0, length);
      buffer = bigger;
    }
    const wanted = buffer.length - length;
    const { bytesRead } = await handle.read(buffer, length, wanted, null);
    length += bytesRead;
    // A short read of a regular file means its end was reached.
    if (bytesRead === 0 || bytesRead < wanted) break;
  }
  if (length > maxBytes) return { bytes: buffer.subarray(0, maxBytes), truncated: true };
  return { bytes: buffer.subarray(0, length), truncated: false };
}
