import { randomUUID } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import {
  type FileHandle,
  lstat,
  open,
  readlink,
  realpath,
  rename,
  rm,
  stat,
} from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { systemErrorCode } from './file-system-error.js';

/** Matches the temporary files `writeFileAtomic` leaves only while a write is in flight. */
export const TEMPORARY_FILE_PATTERN = /^\..+\.[0-9]+\.[0-9a-f-]{36}\.tmp$/;

const RENAME_ATTEMPTS = 5;

const hasProcDescriptors = existsSync('/proc/self/fd');

async function renameWithRetry(from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await rename(from, to);
      return;
    } catch (error) {
      // Windows refuses to replace a file another process holds open; that clears quickly.
      const code = systemErrorCode(error);
      const transient = code === 'EPERM' || code === 'EACCES' || code === 'EBUSY';
      if (!transient || attempt >= RENAME_ATTEMPTS) throw error;
      await new Promise((settle) => setTimeout(settle, 10 * attempt));
    }
  }
}

function escaped(directory: string, location: string | undefined): DelegateError {
  return new DelegateError(
    'PATH_ESCAPE',
    `Refusing to write in "${directory}": it moved${location === undefined ? '' : ` to "${location}"`} ` +
      '(a folder was replaced by a symbolic link) while it was being written. Nothing was left there; retry.',
    { details: { directory, ...(location === undefined ? {} : { location }) } },
  );
}

/** Why `directory` could not be opened as a folder: a symbolic link (an escape) or something else in its place. */
async function notAFolder(directory: string): Promise<DelegateError> {
  const found = await lstat(directory).catch(() => undefined);
  if (found === undefined || found.isSymbolicLink()) return escaped(directory, undefined);
  return new DelegateError(
    'FILE_SYSTEM_ERROR',
    `Cannot write in "${directory}": it is ${found.isFile() ? 'a file' : 'not a folder'}, where the memory folder belongs. Move or delete it, then retry.`,
    { details: { directory } },
  );
}

/**
 * Where the folder is, as an open descriptor checked to be `expected` (its real path).
 * On Linux, names inside it are then reached through `/proc/self/fd/N/name`, looked up
 * in that very folder whatever happens to the path meanwhile.
 */
async function openFolder(directory: string, expected: string): Promise<FileHandle | undefined> {
  if (!hasProcDescriptors) return undefined;
  let handle: FileHandle;
  try {
    handle = await open(
      directory,
      constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW,
    );
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ELOOP' || code === 'ENOTDIR') throw await notAFolder(directory);
    throw error;
  }
  const location = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (location !== expected) {
    await handle.close();
    throw escaped(directory, location);
  }
  return handle;
}

/** Without /proc: checks that the new temporary file really is in the expected folder. */
async function assertCreatedInside(options: {
  handle: FileHandle;
  temporary: string;
  expected: string;
}): Promise<void> {
  const { handle, temporary, expected } = options;
  const [opened, real] = await Promise.all([handle.stat(), realpath(temporary)]);
  const found = await stat(real);
  const same = found.ino === opened.ino && found.dev === opened.dev;
  if (dirname(real) !== expected || !same) {
    // It was made somewhere else: remove it there.
    if (same) await rm(real, { force: true }).catch(() => undefined);
    throw escaped(dirname(temporary), dirname(real));
  }
}

/**
 * Replaces `file` with `content` atomically: writes a uniquely named temporary file in
 * the same folder, optionally fsyncs it, then renames it over the target. A reader sees
 * the old content or the new one, never a mix. With `expectedDirectory` (the real path
 * the folder must have), the temporary file is confined like the target: on Linux it is
 * created and renamed inside the checked folder's descriptor, so a folder swapped for a
 * symbolic link cannot put it elsewhere; elsewhere its location is checked after
 * creation. The temporary file is removed on every failure.
 */
export async function writeFileAtomic(
  file: string,
  content: string,
  options: { fsync?: boolean; expectedDirectory?: string } = {},
): Promise<void> {
  const directory = dirname(file);
  const temporaryName = `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`;
  const folder =
    options.expectedDirectory === undefined
      ? undefined
      : await openFolder(directory, options.expectedDirectory);
  const inFolder = (name: string): string =>
    folder === undefined ? join(directory, name) : `/proc/self/fd/${folder.fd}/${name}`;
  const temporary = inFolder(temporaryName);
  let created = false;
  try {
    const handle = await open(temporary, 'wx');
    created = true;
    try {
      if (folder === undefined && options.expectedDirectory !== undefined) {
        await assertCreatedInside({ handle, temporary, expected: options.expectedDirectory });
      }
      await handle.writeFile(content, 'utf8');
      if (options.fsync === true) await handle.sync();
    } finally {
      await handle.close();
    }
    await renameWithRetry(temporary, inFolder(basename(file)));
  } catch (error) {
    if (created) await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  } finally {
    await folder?.close();
  }
}
