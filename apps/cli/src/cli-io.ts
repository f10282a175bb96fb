import { isAbsolute } from 'node:path';
import { UsageError } from './exit-codes.js';
import { printable } from './terminal/format.js';

/** The process around a command: its streams, environment and working directory. */
export type CliIo = {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  env: NodeJS.ProcessEnv;
  /** The directory `delegate` was started in. */
  cwd: string;
  /** Aborts when stdout's reader goes away (a closed pipe): a run then stops. */
  outputClosed?: AbortSignal;
  /**
   * The first error writing stdout other than its reader going away (a full disk: `ENOSPC`,
   * an I/O error: `EIO`), once there was one: the output is lost, so the command fails.
   */
  outputFailure?: () => NodeJS.ErrnoException | undefined;
};

/**
 * The real process's streams, environment and directory. A write to a closed pipe (as in
 * `delegate run … | head -1`) aborts `outputClosed` instead of crashing the process. Any
 * other error writing stdout (`ENOSPC` of `> /dev/full`, `EIO`) is said once on stderr and
 * kept as `outputFailure`: the reader is still there but lost what was written, which is a
 * failure (exit code 1), not a reader that went away (141). Errors writing stderr (a closed
 * terminal) are dropped: there is nowhere left to say them, and the run must still stop its
 * agents.
 */
export function processIo(): CliIo {
  const closed = new AbortController();
  let failure: NodeJS.ErrnoException | undefined;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') {
      closed.abort();
      return;
    }
    // Each later write fails again (or on a destroyed stream): the first error says it all.
    if (failure !== undefined || closed.signal.aborted) return;
    failure = error;
    const named =
      error.code && !error.message.startsWith(error.code)
        ? `${error.code}: ${error.message}`
        : error.message;
    process.stderr.write(
      `delegate: cannot write the output (${printable(named)}); what was not written is lost, so the command fails (exit code 1).\n`,
    );
  });
  process.stderr.on('error', () => undefined);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    // Read when a command needs it: `--version` and `--help` work in a deleted directory.
    get cwd(): string {
      return currentDirectory();
    },
    outputClosed: closed.signal,
    outputFailure: () => failure,
  };
}

/**
 * The process's working directory; one that was deleted (or cannot be read) is a usage error
 * saying so, instead of the `uv_cwd` crash of `process.cwd()`.
 */
export function currentDirectory(): string {
  try {
    return process.cwd();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error';
    throw new UsageError(
      `the current directory cannot be read (${code}: it was deleted, or access to it was taken away). Change to a directory that exists, or pass --cwd with an absolute path.`,
    );
  }
}

/**
 * Where an absolute `--cwd` stands in for a working directory that no longer exists: the
 * process moves there, so relative paths of the other flags are taken from it.
 */
export function enterCwdFlagIfCurrentGone(cwdFlag: unknown): void {
  if (typeof cwdFlag !== 'string' || !isAbsolute(cwdFlag)) return;
  try {
    process.cwd();
    return;
  } catch {
    // Gone: move to --cwd below.
  }
  try {
    process.chdir(cwdFlag);
  } catch {
    // A --cwd that does not exist either: the command says the current directory is gone.
  }
}
