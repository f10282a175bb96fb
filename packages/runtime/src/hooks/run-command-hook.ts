import { spawn } from 'node:child_process';
import { withoutCredentials } from '../session/shell-environment.js';

/** Default time a hook command may take, in seconds (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;

const MAX_CAPTURED_BYTES = 64 * 1024;

/** How a hook command ended. */
export type HookRunResult = {
  /** Exit code; null when it was killed or could not start. */
  exitCode: number | null;
  /** Its standard output (at most 64 KiB). */
  stdout: string;
  /** Its standard error (at most 64 KiB). */
  stderr: string;
  /** Set when it did not finish on its own: `timeout`, `aborted`, or the spawn error's message. */
  failure?: string;
};

/** Options of {@link runCommandHook}. */
export type RunCommandHookOptions = {
  /** Shell command line. */
  command: string;
  /** JSON written to its standard input. */
  input: unknown;
  /** Working directory. */
  cwd: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Seconds before it is killed. */
  timeoutSeconds?: number;
  /** Kills it when aborted. */
  signal?: AbortSignal;
};

function capture(chunks: Buffer[], chunk: Buffer, total: { bytes: number }): void {
  if (total.bytes >= MAX_CAPTURED_BYTES) return;
  const room = MAX_CAPTURED_BYTES - total.bytes;
  const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
  chunks.push(kept);
  total.bytes += kept.length;
}

/**
 * Runs one hook command through the shell, with `input` as JSON on stdin, in its own
 * process group (so a timeout or an abort kills everything it started). Never rejects:
 * a command that cannot start, times out or is aborted reports it in `failure`.
 */
export function runCommandHook(options: RunCommandHookOptions): Promise<HookRunResult> {
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const sizes = { out: { bytes: 0 }, err: { bytes: 0 } };
    let failure: string | undefined;
    const child = spawn(options.command, {
      cwd: options.cwd,
      // Hooks come from agent files, possibly of a cloned repository: no credentials.
      env: { ...withoutCredentials(process.env), ...options.env },
      shell: true,
      detached: process.platform !== 'win32',
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const kill = (reason: string): void => {
      failure ??= reason;
      try {
        if (child.pid !== undefined && process.platform !== 'win32')
          process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(
      () => kill('timeout'),
      (options.timeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS) * 1000,
    );
    const onAbort = (): void => kill('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) kill('aborted');
    child.stdout.on('data', (chunk: Buffer) => capture(stdout, chunk, sizes.out));
    child.stderr.on('data', (chunk: Buffer) => capture(stderr, chunk, sizes.err));
    // A hook that does not read its input closes the pipe early; that is not a failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify(options.input));
    let settled = false;
    const finish = (code: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: failure ? null : code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        ...(failure ? { failure } : {}),
      });
    };
    child.on('error', (error) => {
      failure ??= error.message;
      // A process that never started emits no close event on every platform.
      if (child.pid === undefined) finish(null);
    });
    child.on('close', (code) => finish(code));
  });
}
