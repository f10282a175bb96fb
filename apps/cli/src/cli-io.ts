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
};

/**
 * The real process's streams, environment and directory. A write to a closed pipe (as in
 * `delegate run … | head -1`) aborts `outputClosed` instead of crashing the process; so does
 * one to a terminal that closed. Errors writing stderr (a closed terminal) are dropped: there
 * is nowhere left to say them, and the run must still stop its agents.
 */
export function processIo(): CliIo {
  const closed = new AbortController();
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') {
      closed.abort();
      return;
    }
    process.stderr.write(`delegate: cannot write the output: ${error.message}\n`);
    closed.abort();
  });
  process.stderr.on('error', () => undefined);
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    outputClosed: closed.signal,
  };
}
