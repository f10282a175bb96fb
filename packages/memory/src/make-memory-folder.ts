import { constants, lstatSync, realpathSync } from 'node:fs';
import { type FileHandle, mkdir, open, readlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative } from 'node:path';
import { DelegateError } from '@delegate/core';
import { type MemoryDirectoryCheck, realPathOfNearest } from './check-memory-directory.js';
import { systemErrorCode } from './file-system-error.js';
import { hasProcDescriptors } from './proc-descriptors.js';

const folderFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

function isInside(parent: string, child: string): boolean {
  const path = relative(parent, child);
  return path === '' || (!path.startsWith('..') && !isAbsolute(path));
}

function moved(check: MemoryDirectoryCheck, location: string | undefined): DelegateError {
  return new DelegateError(
    'PATH_ESCAPE',
    `Refusing to create the ${check.scope} memory folder "${check.directory}": a folder on its path ` +
      `was replaced by a symbolic link${location === undefined ? '' : ` (to "${location}")`} while it was being made. ` +
      'Nothing was created there; replace the link with a real folder and retry.',
    {
      details: {
        scope: check.scope,
        directory: check.directory,
        ...(location === undefined ? {} : { location }),
      },
    },
  );
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Creates an agent's memory folder and its missing parents (`mkdir -p`), confined like
 * the folder itself: on Linux each missing folder is made inside the open descriptor of
 * its checked parent (`/proc/self/fd/N/name`), so a parent swapped for a symbolic link
 * cannot make a folder appear elsewhere, and for `project`/`local` memory the nearest
 * existing parent must lie inside the project. Elsewhere it falls back to `mkdir -p`.
 */
export async function makeMemoryFolder(check: MemoryDirectoryCheck): Promise<void> {
  if (!hasProcDescriptors()) {
    await mkdir(check.directory, { recursive: true });
    return;
  }
  const missing: string[] = [];
  let existing = check.directory;
  while (!exists(existing) && dirname(existing) !== existing) {
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  if (missing.length === 0) return;
  const realBase = realpathSync(existing);
  if (check.scope !== 'user') {
    // Inside the project, or above a project folder that does not exist yet.
    const project = realPathOfNearest(check.cwd);
    if (!isInside(project, realBase) && !isInside(realBase, project)) throw moved(check, realBase);
  }
  let handle: FileHandle = await open(realBase, folderFlags).catch((error: unknown) => {
    const code = systemErrorCode(error);
    if (code === 'ELOOP' || code === 'ENOTDIR') throw moved(check, undefined);
    throw error;
  });
  try {
    const location = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
    if (location !== realBase) throw moved(check, location);
    for (const name of missing) {
      const inside = `/proc/self/fd/${handle.fd}/${name}`;
      await mkdir(inside).catch((error: unknown) => {
        if (systemErrorCode(error) !== 'EEXIST') throw error;
      });
      const next = await open(inside, folderFlags).catch((error: unknown) => {
        const code = systemErrorCode(error);
        if (code === 'ELOOP' || code === 'ENOTDIR') throw moved(check, undefined);
        throw error;
      });
      await handle.close();
      handle = next;
    }
  } finally {
    await handle.close();
  }
}
