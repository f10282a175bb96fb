import { randomUUID } from 'node:crypto';
import { type FileHandle, lstat, open, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { systemErrorCode } from './file-system-error.js';
import { type MemoryFolder } from './open-memory-folder.js';

/** Matches the temporary files `writeFileAtomic` leaves only while a write is in flight. */
export const TEMPORARY_FILE_PATTERN = /^\..+\.[0-9]+\.[0-9a-f-]{36}\.tmp$/;

const RENAME_ATTEMPTS = 5;

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

/**
 * Why the memory folder could not be opened to write in: a symbolic link (an escape),
 * nothing at all (it moved), or something else in its place (a file).
 */
export async function notAFolder(directory: string): Promise<DelegateError> {
  const found = await lstat(directory).catch(() => undefined);
  if (found === undefined || found.isSymbolicLink()) return escaped(directory, undefined);
  return new DelegateError(
    'FILE_SYSTEM_ERROR',
    `Cannot write in "${directory}": it is ${found.isFile() ? 'a file' : 'not a folder'}, where the memory folder belongs. Move or delete it, then retry.`,
    { details: { directory } },
  );
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
 * the old content or the new one, never a mix. With `folder` (the memory folder held open,
 * Linux), the temporary file is created and renamed inside that very folder, so a folder
 * on its path swapped for a symbolic link cannot put it elsewhere. With
 * `expectedDirectory` instead (the real path the folder must have, without /proc), the
 * temporary file's location is checked after creation. It is removed on every failure.
 */
export async function writeFileAtomic(
  file: string,
  content: string,
  options: { fsync?: boolean; folder?: MemoryFolder; expectedDirectory?: string } = {},
): Promise<void> {
  const directory = dirname(file);
  const temporaryName = `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`;
  const { folder } = options;
  const inFolder = (name: string): string =>
    folder === undefined ? join(directory, name) : folder.at(name);
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
  }
}
