import { constants, type Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { systemErrorCode, toFileSystemError } from './file-system-error.js';

/** Flags that create a file only when nothing (not even a symlink) is at its path. O_NOFOLLOW does not exist on Windows. */
export const EXCLUSIVE_CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/**
 * This user's own folder in the temp folder: `<os.tmpdir()>/delegate-<uid>` (the user name
 * instead of the uid where there are no uids).
 */
export function privateTempDirectory(): string {
  const uid = process.getuid?.();
  return join(tmpdir(), `delegate-${uid ?? userInfo().username}`);
}

/** Why `stats` is no private directory of this user, or undefined when it is one. */
function privacyProblem(stats: Stats): string | undefined {
  const uid = process.getuid?.();
  if (stats.isSymbolicLink()) return 'is a symbolic link';
  if (!stats.isDirectory()) return 'is not a directory';
  // Without uids (Windows) there is nothing more to check.
  if (uid === undefined) return undefined;
  if (stats.uid !== uid)
    return `belongs to another user (uid ${stats.uid}, this process runs as uid ${uid})`;
  if ((stats.mode & 0o077) !== 0)
    return `is open to other users (mode ${(stats.mode & 0o777).toString(8).padStart(4, '0')})`;
  return undefined;
}

/**
 * Creates `path` (mode 0700) unless it exists, then checks it is a real directory of this
 * user that nobody else can enter; throws a `FILE_SYSTEM_ERROR` naming it otherwise.
 */
export async function ensurePrivateDirectory(path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (error) {
    if (systemErrorCode(error) !== 'EEXIST') throw toFileSystemError(error, path);
  }
  const stats = await lstat(path).catch((error: unknown) => {
    throw toFileSystemError(error, path);
  });
  const problem = privacyProblem(stats);
  if (problem === undefined) return;
  throw new DelegateError(
    'FILE_SYSTEM_ERROR',
    `The background shell output directory ${path} ${problem}, so command output written there ` +
      'would not be private. Remove it (Delegate creates it again, mode 0700, owned by you) or ' +
      'give the registry an outputDirectory of your own.',
    { details: { path } },
  );
}

/** True when `path` exists and is a private directory of this user (nothing is created). */
export async function isPrivateDirectory(path: string): Promise<boolean> {
  const stats = await lstat(path).catch(() => undefined);
  return stats !== undefined && privacyProblem(stats) === undefined;
}
