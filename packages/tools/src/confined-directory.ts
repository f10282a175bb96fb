import { constants, type Dirent } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, rmdir } from 'node:fs/promises';
import { basename, dirname, sep } from 'node:path';
import { DelegateError } from '@delegate/core';
import { descriptorLocation, hasProcDescriptors, pathInDescriptor } from './descriptor-location.js';
import { hasSystemCode, systemErrorCode } from './file-system-error.js';
import { isPathInside } from './resolve-path-within-roots.js';

const directoryFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

function moved(path: string, root: string, location?: string): DelegateError {
  return new DelegateError(
    'PATH_ESCAPE',
    `${path} moved outside ${root} (a directory was replaced by a symbolic link) while it was being used. ` +
      'Check the path and retry.',
    { details: { path, root, ...(location === undefined ? {} : { location }) } },
  );
}

/**
 * Opens a directory and checks, on the open descriptor, that it lies inside `root`. The
 * last component is not followed (a symbolic link there fails); a parent swapped for a
 * link is caught by the location check. Throws PATH_ESCAPE, or the file-system error.
 */
export async function openDirectoryInside(options: {
  realPath: string;
  root: string;
}): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(options.realPath, directoryFlags);
  } catch (error) {
    if (hasSystemCode(error, 'ELOOP')) throw moved(options.realPath, options.root);
    if (hasSystemCode(error, 'ENOTDIR')) {
      // With O_DIRECTORY, a symbolic link in the last place fails as "not a directory".
      const stats = await lstat(options.realPath).catch(() => undefined);
      if (stats?.isSymbolicLink() === true) throw moved(options.realPath, options.root);
    }
    throw error;
  }
  const location = await descriptorLocation(handle, options.realPath);
  if (location === undefined || !isPathInside(location, options.root)) {
    await handle.close();
    throw moved(options.realPath, options.root, location);
  }
  return handle;
}

/**
 * Lists a directory that must lie inside `root`, or returns undefined when it vanished,
 * is no longer a directory, or now lies outside (a swapped-in symbolic link is never
 * followed out of the root). On Linux the listing is read through the checked descriptor.
 */
export async function readDirectoryInside(options: {
  path: string;
  root: string;
}): Promise<Dirent[] | undefined> {
  let handle: FileHandle;
  try {
    handle = await openDirectoryInside({ realPath: options.path, root: options.root });
  } catch (error) {
    if (DelegateError.hasCode(error, 'PATH_ESCAPE')) return undefined;
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'EPERM') {
      return undefined;
    }
    throw error;
  }
  try {
    if (hasProcDescriptors())
      return await readdir(pathInDescriptor(handle), { withFileTypes: true });
    const entries = await readdir(options.path, { withFileTypes: true });
    // Without /proc: accept the listing only if the path still is the checked directory.
    const again = await lstat(options.path);
    const opened = await handle.stat();
    return again.isDirectory() && again.ino === opened.ino && again.dev === opened.dev
      ? entries
      : undefined;
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return undefined;
    throw error;
  } finally {
    await handle.close();
  }
}

/** The nearest existing ancestor of `realPath` (itself included) and the missing names below it. */
async function splitExisting(realPath: string): Promise<{ existing: string; missing: string[] }> {
  const missing: string[] = [];
  let current = realPath;
  for (;;) {
    const stats = await lstat(current).catch((error: unknown) => {
      if (hasSystemCode(error, 'ENOENT')) return undefined;
      throw error;
    });
    if (stats !== undefined) return { existing: current, missing: missing.reverse() };
    const parent = dirname(current);
    if (parent === current) return { existing: current, missing: missing.reverse() };
    missing.push(basename(current));
    current = parent;
  }
}

/**
 * Creates the missing directories of `realPath` (which must lie in `root`) and returns an
 * open descriptor of the last one. On Linux each directory is created inside the
 * descriptor of its checked parent (`/proc/self/fd/N/name`), so a parent swapped for a
 * symbolic link cannot make a directory appear outside the root; elsewhere each new
 * directory is checked after it is made and removed again if it landed outside.
 */
export async function makeDirectoriesInside(options: {
  realPath: string;
  root: string;
}): Promise<FileHandle> {
  const { realPath, root } = options;
  const { existing, missing } = await splitExisting(realPath);
  if (!isPathInside(existing, root)) throw moved(realPath, root, existing);
  let handle = await openDirectoryInside({ realPath: existing, root });
  let current = existing;
  try {
    for (const name of missing) {
      current = `${current}${current.endsWith(sep) ? '' : sep}${name}`;
      const target = hasProcDescriptors() ? pathInDescriptor(handle, name) : current;
      await mkdir(target).catch((error: unknown) => {
        if (!hasSystemCode(error, 'EEXIST')) throw error;
      });
      let next: FileHandle;
      try {
        next = hasProcDescriptors()
          ? await open(target, directoryFlags)
          : await openDirectoryInside({ realPath: current, root });
      } catch (error) {
        if (!hasProcDescriptors()) {
          // It may have been made outside; remove it if it is an empty directory we made.
          const location = await lstat(current).catch(() => undefined);
          if (location?.isDirectory() === true) await rmdir(current).catch(() => undefined);
        }
        throw error;
      }
      await handle.close();
      handle = next;
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}
