import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../exit-codes.js';

/** True when a process with this id runs (one of another user counts: it exists). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process id a lock file names, or undefined when it names none (or is gone). */
async function holderOf(path: string): Promise<number | undefined> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Creates `path` holding this process's id, in one step: the id is written to a file of its
 * own, then linked to `path` (a link fails if `path` exists), so no reader ever sees the lock
 * without its id. False when `path` exists already.
 */
async function createLock(path: string): Promise<boolean> {
  const own = `${path}.${process.pid}`;
  await writeFile(own, `${process.pid}\n`, { mode: 0o600 });
  try {
    await link(own, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(own).catch(() => undefined);
  }
}

/**
 * Marks a session as in use by this process (`<transcriptDir>/<sessionId>.lock`, holding the
 * process id), so a `--resume` of it from another process while this one runs is refused
 * rather than both appending to one transcript. A lock left by a process that is gone (a
 * crash, a kill) is taken over; one this process holds already is kept. A folder where no
 * lock can be written (a file in the way, no permission) gets none: the transcript cannot be
 * written there either, and the run says so. This guards against a person resuming a running
 * session by mistake, not against a process racing for the lock on purpose. Returns the
 * function that releases it.
 */
export async function lockSession(options: {
  transcriptDir: string;
  sessionId: string;
}): Promise<() => Promise<void>> {
  const path = join(options.transcriptDir, `${options.sessionId}.lock`);
  const none = async (): Promise<void> => undefined;
  const release = async (): Promise<void> => {
    if ((await holderOf(path)) === process.pid) await unlink(path).catch(() => undefined);
  };
  try {
    await mkdir(options.transcriptDir, { recursive: true });
  } catch {
    return none;
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      if (await createLock(path)) return release;
    } catch {
      return none;
    }
    const holder = await holderOf(path);
    if (holder === process.pid) return release;
    if (holder !== undefined && isRunning(holder)) {
      throw new UsageError(
        `--resume ${options.sessionId}: the session is in use by process ${holder}, which is still running; two processes would write one transcript. Wait for it to end (or stop it), then resume.`,
      );
    }
    // Left by a process that is gone (or unreadable): taken over.
    await unlink(path).catch(() => undefined);
  }
  throw new UsageError(
    `--resume ${options.sessionId}: could not take the session's lock (${path}); another process keeps taking it. Try again once it has ended.`,
  );
}
