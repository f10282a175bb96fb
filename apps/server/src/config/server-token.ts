import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DelegateError, errorMessage } from '@delegate/core';

/** File name of the generated token inside the data directory. */
export const TOKEN_FILE = 'server-token';

/** Where the token came from and, when it was just made, that it must be shown once. */
export type ServerToken = {
  /** The token. */
  token: string;
  /** `env`/`config` when given, `file` when read back, `generated` when made now. */
  source: 'config' | 'file' | 'generated';
  /** The token file, for `file` and `generated`. */
  path?: string;
};

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * Returns the configured token, or the one stored in `dataDir`, or makes one (32 random
 * bytes), stores it with mode 0600 and reports it as `generated` so the caller prints it
 * once. A stored file readable by others is tightened to 0600.
 */
export async function loadServerToken(options: {
  configured: string | undefined;
  dataDir: string;
}): Promise<ServerToken> {
  if (options.configured !== undefined) return { token: options.configured, source: 'config' };
  const path = join(options.dataDir, TOKEN_FILE);
  try {
    const token = (await readFile(path, 'utf8')).trim();
    if (token.length < 16) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `The token file ${path} holds fewer than 16 characters. Delete it to have a new token generated, or set DELEGATE_SERVER_TOKEN.`,
      );
    }
    if (((await stat(path)).mode & 0o077) !== 0) await chmod(path, 0o600);
    return { token, source: 'file', path };
  } catch (error) {
    if (!isNotFound(error)) {
      if (DelegateError.isInstance(error)) throw error;
      throw new DelegateError(
        'FILE_SYSTEM_ERROR',
        `Cannot read the token file ${path}: ${errorMessage(error)}.`,
        { cause: error },
      );
    }
  }
  const token = `dst_${randomBytes(32).toString('base64url')}`;
  try {
    await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
    // `wx` fails if another process made the file meanwhile; then its token is used.
    await writeFile(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return loadServerToken({ configured: undefined, dataDir: options.dataDir });
    throw new DelegateError(
      'FILE_SYSTEM_ERROR',
      `Cannot store a new token in ${path}: ${errorMessage(error)}. Make --data-dir writable, or set DELEGATE_SERVER_TOKEN.`,
      { cause: error },
    );
  }
  return { token, source: 'generated', path };
}
