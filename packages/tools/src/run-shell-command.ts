import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DelegateError } from '@delegate/core';
import { HeadTailBuffer } from './head-tail-buffer.js';
import { isProcessGroupAlive, killProcessGroup, stopGroupAtExit } from './process-group.js';
import { removeShellRecord, writeShellRecord } from './shell-records.js';

/** How a shell command ended. */
export type ShellCommandResult = {
  /** Combined stdout and stderr, in arrival order, capped (head and tail kept). */
  output: string;
  /** Bytes cut from the middle of the output. */
  cutBytes: number;
  /** Exit code, or null when a signal ended the shell. */
  exitCode: number | null;
  /** Signal that ended the shell, if any. */
  signal: NodeJS.Signals | null;
  /** True when the timeout fired and the process group was killed. */
  timedOut: boolean;
  /** True when the abort signal fired and the process group was killed. */
  aborted: boolean;
  /** Pid of the shell (leader of its process group). */
  pid: number | undefined;
};

/** Options of `runShellCommand`. */
export type RunShellCommandOptions = {
  /** Command line given to `/bin/bash -c`. */
  command: string;
  /** Working directory. */
  cwd: string;
  /** Kill the group after this many milliseconds. */
  timeoutMs: number;
  /** Kills the group when it fires. */
  signal?: AbortSignal;
  /** Output cap in bytes. */
  maxOutputBytes: number;
  /** Time between SIGTERM and SIGKILL (default 2000 ms). */
  killGraceMs?: number;
  /** Environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
};

// How long to wait for pipes to close once the shell has exited, when a leftover
// process of the group still holds them.
const pipeDrainMs = 200;

/**
 * Stops the group at this process's exit, and records it for `reapOrphanedShells`, so that
 * the next Delegate process stops it when this one is killed (SIGKILL, a crash) before its
 * exit hook could. Returns the function that forgets both once the group has ended.
 */
function stopGroupUnlessHostDies(pid: number): () => void {
  const forget = stopGroupAtExit(pid);
  const record = writeShellRecord(`t${randomBytes(6).toString('hex')}`, pid);
  return () => {
    forget();
    void record.then((path) => (path === undefined ? undefined : removeShellRecord(path)));
  };
}

/**
 * Runs a command with `/bin/bash -c` in its own process group. A timeout or an abort
 * kills the whole group (SIGTERM, then SIGKILL after a grace period); processes the
 * command leaves behind are stopped the same way when the shell exits.
 */
export function runShellCommand(options: RunShellCommandOptions): Promise<ShellCommandResult> {
  const killGraceMs = options.killGraceMs ?? 2000;
  return new Promise((resolve, reject) => {
    const buffer = new HeadTailBuffer(options.maxOutputBytes);
    let timedOut = false;
    let aborted = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let exited = false;
    let openStreams = 2;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const child = spawn('/bin/bash', ['-c', options.command], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    // The command runs in its own group (so a timeout can stop all of it): it must not
    // outlive this process if this process exits or crashes before it ends.
    const forgetGroup = pid === undefined ? () => undefined : stopGroupUnlessHostDies(pid);

    const terminate = (): void => {
      if (pid === undefined || killTimer !== undefined) return;
      killProcessGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => {
        killProcessGroup(pid, 'SIGKILL');
        forgetGroup();
      }, killGraceMs);
    };

    const finish = (): void => {
      if (settled || !exited || openStreams > 0) return;
      settled = true;
      clearTimeout(timeoutTimer);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener('abort', onAbort);
      // Leftovers of the group are stopped; SIGKILL follows unless they are gone by then.
      if (pid !== undefined && isProcessGroupAlive(pid)) {
        terminate();
      } else {
        clearTimeout(killTimer);
        forgetGroup();
      }
      resolve({
        output: buffer.toString(),
        cutBytes: buffer.cutBytes,
        exitCode,
        signal: exitSignal,
        timedOut,
        aborted,
        pid,
      });
    };

    const onAbort = (): void => {
      aborted = true;
      terminate();
    };
    const timeoutTimer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, options.timeoutMs);

    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    for (const stream of [child.stdout, child.stderr]) {
      stream.on('data', (chunk: Buffer) => buffer.write(chunk));
      stream.on('close', () => {
        openStreams--;
        finish();
      });
    }
    child.on('error', (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeoutTimer);
      clearTimeout(killTimer);
      forgetGroup();
      options.signal?.removeEventListener('abort', onAbort);
      reject(
        new DelegateError(
          'TOOL_FAILED',
          `Could not start /bin/bash in ${options.cwd}: ${error.message}. Check that the working directory exists.`,
          { cause: error, details: { cwd: options.cwd } },
        ),
      );
    });
    child.on('exit', (code, signal) => {
      exited = true;
      exitCode = code;
      exitSignal = signal;
      if (openStreams > 0) {
        drainTimer = setTimeout(() => {
          // A process that left the group still holds the pipes: stop waiting for it.
          child.stdout.destroy();
          child.stderr.destroy();
        }, pipeDrainMs);
      }
      finish();
    });
  });
}
