import { randomUUID } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { systemErrorCode } from './file-system-error.js';

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

/**
 * Replaces `file` with `content` atomically: writes a uniquely named temporary file in
 * the same folder, optionally fsyncs it, then renames it over the target. A reader sees
 * the old content or the new one, never a mix. The temporary file is removed on failure.
 */
export async function writeFileAtomic(
  file: string,
  content: string,
  options: { fsync?: boolean } = {},
): Promise<void> {
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.${randomUUID()}.tmp`);
  try {
    const handle = await open(temporary, 'wx');
    try {
      await handle.writeFile(content, 'utf8');
      if (options.fsync === true) await handle.sync();
    } finally {
      await handle.close();
    }
    await renameWithRetry(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
