import {
  type Stats,
  closeSync,
  constants,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DelegateError } from '@delegate/core';
import { type MemoryDirectoryCheck, checkMemoryDirectory } from './check-memory-directory.js';
import { systemErrorCode } from './file-system-error.js';
import { descriptorPath, hasProcDescriptors, rememberDescriptorPath } from './proc-descriptors.js';

/**
 * A memory folder held open, so that names inside it are looked up in that very folder:
 * swapping a folder on its path for a symbolic link afterwards changes nothing.
 */
export interface MemoryFolder {
  /** The folder's ordinary path, for results and messages. */
  readonly shown: string;
  /** The path of `name` inside the folder (`/proc/self/fd/N/name` on Linux), or of the folder itself. */
  at(name?: string): string;
  /**
   * Opens the subfolder `name` without following a symbolic link. Undefined when there is
   * none (or a file is in its place); PATH_ESCAPE when a link is there.
   */
  child(name: string): MemoryFolder | undefined;
  /** Lets the folder go (closes its descriptor); calling it again does nothing. */
  close(): void;
}

const FOLLOWING_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;
const NOT_FOLLOWING_FLAGS = FOLLOWING_FLAGS | constants.O_NOFOLLOW;

function swapped(shown: string): DelegateError {
  return new DelegateError(
    'PATH_ESCAPE',
    `Refusing to go through "${shown}": it is a symbolic link, or was swapped for one while memory ` +
      'was using it. Agent memory never follows a link there, so nothing outside was read or changed; ' +
      'replace the link with a real folder and retry.',
    { details: { path: shown } },
  );
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** Opens a folder by path, following links; undefined when nothing (or no folder) is there. */
function openFollowing(path: string): number | undefined {
  try {
    return openSync(path, FOLLOWING_FLAGS);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** Opens `name` inside the folder `parent` holds, as a folder, without following a link. */
function openChild(parent: number, name: string, shown: string): number | undefined {
  const path = descriptorPath(parent, name);
  try {
    return openSync(path, NOT_FOLLOWING_FLAGS);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT') return undefined;
    if (code !== 'ELOOP' && code !== 'ENOTDIR') throw error;
    // Linux reports a link as ENOTDIR when O_DIRECTORY is set: look at what is there. A
    // folder now means it changed in between, so it is treated as the link it just was.
    const found = lstatOrUndefined(path);
    if (found === undefined) return undefined;
    if (found.isSymbolicLink() || found.isDirectory()) throw swapped(shown);
    return undefined;
  }
}

function descriptorFolder(fd: number, shown: string): MemoryFolder {
  let open = true;
  rememberDescriptorPath(fd, shown);
  return {
    shown,
    at: (name) => descriptorPath(fd, name),
    child: (name) => {
      const childShown = join(shown, name);
      const child = openChild(fd, name, childShown);
      return child === undefined ? undefined : descriptorFolder(child, childShown);
    },
    close: () => {
      // A second close could close another file that got the same number meanwhile.
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
}

/** Without /proc: a folder named by its path, each subfolder checked not to be a link. */
function pathFolder(path: string): MemoryFolder {
  return {
    shown: path,
    at: (name) => (name === undefined ? path : join(path, name)),
    child: (name) => {
      const childPath = join(path, name);
      const found = lstatOrUndefined(childPath);
      if (found?.isSymbolicLink() === true) throw swapped(childPath);
      return found?.isDirectory() === true ? pathFolder(childPath) : undefined;
    },
    close: () => undefined,
  };
}

/** Walks from `folder` down `names`, closing each folder it leaves; undefined when one is missing. */
function walkDown(folder: MemoryFolder, names: readonly string[]): MemoryFolder | undefined {
  let current = folder;
  try {
    for (const name of names) {
      const next = current.child(name);
      current.close();
      if (next === undefined) return undefined;
      current = next;
    }
    return current;
  } catch (error) {
    current.close();
    throw error;
  }
}

/**
 * The project folder, opened by `cwd` (which may be spelled through a link) and checked on
 * the open descriptor to be the folder `cwd` resolves to, so that a project swapped in
 * between is not taken for it.
 */
function openProject(cwd: string): MemoryFolder | undefined {
  const project = resolve(cwd);
  let realProject: string;
  try {
    realProject = realpathSync(project);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
  const fd = openFollowing(project);
  if (fd === undefined) return undefined;
  const folder = descriptorFolder(fd, project);
  let location: string | undefined;
  try {
    location = readlinkSync(descriptorPath(fd));
  } catch {
    location = undefined;
  }
  if (location !== realProject) {
    folder.close();
    throw swapped(project);
  }
  return folder;
}

/**
 * Opens an agent memory scope root (`check.root`), or returns undefined when it does not
 * exist. On Linux the folder is held by a descriptor: for `project` and `local` memory it
 * is reached from the project folder one name at a time (`.claude`, then `agent-memory`),
 * each opened inside its parent's descriptor without following a link, so no swap of any
 * folder on the way, at any moment, can lead outside; a link found there throws
 * PATH_ESCAPE. The `user` root may be a link (the user owns it). Without /proc, the root is
 * used by path, after the same link checks as before each use (a narrower guarantee).
 */
export function openMemoryRoot(check: MemoryDirectoryCheck): MemoryFolder | undefined {
  const root = resolve(check.root);
  if (!hasProcDescriptors()) {
    // Names are looked up by path, each folder on the way checked for links just before: only
    // a swap racing this very call could lead elsewhere (README, "Limits and notes").
    if (check.scope !== 'user') checkMemoryDirectory({ ...check, folderMayBeLink: true });
    let found: Stats;
    try {
      found = statSync(root);
    } catch (error) {
      const code = systemErrorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    }
    return found.isDirectory() ? pathFolder(root) : undefined;
  }
  if (check.scope === 'user') {
    const fd = openFollowing(root);
    return fd === undefined ? undefined : descriptorFolder(fd, root);
  }
  const project = resolve(check.cwd);
  const inside = relative(project, root);
  if (inside === '' || inside.split(sep)[0] === '..' || isAbsolute(inside)) {
    throw swapped(root);
  }
  const folder = openProject(project);
  return folder === undefined ? undefined : walkDown(folder, inside.split(sep));
}

/**
 * Opens an agent's memory folder (`check.directory`, a direct child of `check.root`) the
 * way {@link openMemoryRoot} opens the root, the folder itself never followed if it is a
 * link (PATH_ESCAPE). Undefined when it does not exist or is not a folder.
 */
export function openMemoryDirectory(check: MemoryDirectoryCheck): MemoryFolder | undefined {
  const directory = resolve(check.directory);
  if (dirname(directory) !== resolve(check.root)) throw swapped(directory);
  const root = openMemoryRoot(check);
  return root === undefined ? undefined : walkDown(root, [basename(directory)]);
}
