import { lstat, readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { systemErrorCode } from './file-system-error.js';
import { type MemoryFolder } from './open-memory-folder.js';

// How often one entry is looked at again when it changed between the look and the removal.
const ATTEMPTS = 3;

// Codes that mean the entry changed kind under us (a folder became a link, a file a folder,
// something was added to a folder being emptied): look again rather than fail at once.
const CHANGED_CODES = new Set(['EISDIR', 'ENOTDIR', 'ENOTEMPTY', 'EEXIST', 'ELOOP']);

/** Removes one entry, returning false when it changed kind in between and must be looked at again. */
async function removeOnce(folder: MemoryFolder, name: string): Promise<boolean> {
  const path = folder.at(name);
  const found = await lstat(path);
  if (!found.isDirectory()) {
    // A file, or a symbolic link: unlink removes the name itself, never what a link points to.
    await unlink(path);
    return true;
  }
  const inner = folder.child(name);
  if (inner === undefined) return false;
  try {
    for (const entry of await readdir(inner.at())) await removeFolderEntry(inner, entry);
  } finally {
    inner.close();
  }
  await rmdir(path);
  return true;
}

/**
 * Removes `name` inside `folder` — a file, a symbolic link (the link only) or a whole folder
 * tree — and does nothing when it is already gone.
 *
 * Why this cannot delete outside: every call names an entry *inside an open folder
 * descriptor* (`/proc/self/fd/N/name`), so the kernel looks the name up in that very folder
 * whatever happens to the path above it, and neither `unlink`, `rmdir` nor `lstat` follows
 * a final link. A folder is descended into only by opening it inside its parent's
 * descriptor without following a link (a link swapped in between fails the open and is
 * looked at again, then unlinked as a link). So a swap of any folder on the way, at any
 * moment, only changes which entry inside the tree is removed, never where the tree is
 * (a folder moved elsewhere while held open takes only its own, inside, entries with it).
 * The other approach, renaming the folder to a unique name and checking it before `rm -r`,
 * is not enough: `rm` still walks the tree by path, so a subfolder swapped for a link while
 * it runs is followed, and the rename itself resolves the path above it again.
 */
export async function removeFolderEntry(folder: MemoryFolder, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (await removeOnce(folder, name)) return;
    } catch (error) {
      if (systemErrorCode(error) === 'ENOENT') return;
      const changed =
        DelegateError.hasCode(error, 'PATH_ESCAPE') ||
        CHANGED_CODES.has(systemErrorCode(error) ?? '');
      if (!changed || attempt >= ATTEMPTS) throw error;
    }
    if (attempt >= ATTEMPTS) {
      const shown = join(folder.shown, name);
      throw new DelegateError(
        'FILE_SYSTEM_ERROR',
        `Could not remove "${shown}": it kept changing while it was being removed. Retry when nothing else is using it.`,
        { details: { path: shown } },
      );
    }
  }
}
