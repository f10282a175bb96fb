import { spawn } from 'node:child_process';
import { type FileHandle, lstat, mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createTaskId,
  DelegateError,
  invalidArgument,
  type TaskStatus,
  timerDelay,
} from '@delegate/core';
import { systemErrorCode, toFileSystemError } from './file-system-error.js';
import {
  EXCLUSIVE_CREATE_FLAGS,
  ensurePrivateDirectory,
  privateTempDirectory,
} from './private-directory.js';
import { HeadTailBuffer } from './head-tail-buffer.js';
import { killProcessGroup, terminateProcessGroup } from './process-group.js';
import {
  reapOrphanedShells,
  removeShellRecord,
  removeShellRecordSync,
  writeShellRecord,
} from './shell-records.js';

/** Age past which a log left in the default output directory is removed: 7 days. */
export const STALE_BACKGROUND_LOG_MS = 7 * 24 * 60 * 60 * 1000;

// What a log file is called: `<taskId>.log`, task ids as `createTaskId` makes them.
const LOG_NAME = /^t[0-9a-f]{12}\.log$/;

/**
 * The default output directory of background shells: `<os.tmpdir()>/delegate-<uid>/tasks`,
 * one per user (the user name instead of the uid where there are no uids).
 */
export function defaultBackgroundOutputDirectory(): string {
  return join(privateTempDirectory(), 'tasks');
}

/**
 * Removes task logs in `directory` last written more than `STALE_BACKGROUND_LOG_MS` ago: only
 * regular files of this user named `<taskId>.log` (a symlink is never followed), and never the
 * log of a shell a registry of this process still knows.
 */
async function pruneStaleLogs(directory: string, now: number): Promise<void> {
  const names = await readdir(directory).catch(() => [] as string[]);
  const known = new Set<string>();
  for (const registry of registries)
    for (const shell of registry.list()) known.add(shell.outputPath);
  const uid = process.getuid?.();
  for (const name of names) {
    if (!LOG_NAME.test(name)) continue;
    const path = join(directory, name);
    if (known.has(path)) continue;
    const stats = await lstat(path).catch(() => undefined);
    if (stats === undefined || !stats.isFile()) continue;
    if (uid !== undefined && stats.uid !== uid) continue;
    if (now - stats.mtimeMs <= STALE_BACKGROUND_LOG_MS) continue;
    await unlink(path).catch(() => undefined);
  }
}

/**
 * Creates a log file at `path`, mode 0600 (less if the umask takes more away), failing when
 * anything (a file, a symlink) is already there. Returns the open handle.
 */
export async function createLogFile(path: string): Promise<FileHandle> {
  return open(path, EXCLUSIVE_CREATE_FLAGS, 0o600).catch((error: unknown) => {
    throw toFileSystemError(error, path);
  });
}

async function removeLog(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (systemErrorCode(error) !== 'ENOENT') throw toFileSystemError(error, path);
  }
}

/** A shell command running (or finished) in the background. */
export type BackgroundShell = {
  /** Task id, also the key of the task in the root app state. */
  taskId: string;
  /** The command line. */
  command: string;
  /** Short description given when it started. */
  description: string;
  /** File that receives combined stdout and stderr. */
  outputPath: string;
  /** Pid of the shell, leader of its process group. */
  pid: number | undefined;
  /** Current status. */
  status: TaskStatus;
  /** Exit code once finished (null when a signal ended it). */
  exitCode: number | null;
  /** Start time, ms since epoch. */
  startTime: number;
  /** End time, ms since epoch, once finished. */
  endTime?: number;
  /** Why the registry stopped it, when it did on its own (its output passed `maxLogBytes`). */
  stopReason?: string;
};

/** A background shell with (a capped view of) its output so far. */
export type BackgroundShellOutput = BackgroundShell & {
  /** Output so far; head and tail kept when over the cap. */
  output: string;
  /** Bytes cut from the middle of the output. */
  cutBytes: number;
};

/** Options of a `BackgroundShellRegistry`. */
export type BackgroundShellRegistryOptions = {
  /**
   * Directory for output files, created (mode 0700) when missing. Default
   * `os.tmpdir()/delegate-<uid>/tasks`, which must be a private directory of this user and
   * whose logs older than `STALE_BACKGROUND_LOG_MS` are removed on the registry's first start.
   */
  outputDirectory?: string;
  /** Time between SIGTERM and SIGKILL when a shell is killed (default 2000 ms). */
  killGraceMs?: number;
  /**
   * Size a shell's log may reach (default `DEFAULT_MAX_BACKGROUND_LOG_BYTES`, 1 GiB): a
   * shell whose log passes it is stopped, with `stopReason` saying so. Checked about once a
   * second, so a fast writer can pass it by what it writes in that second. `Infinity` turns
   * the check off.
   */
  maxLogBytes?: number;
};

/** Default of `maxLogBytes`: 1 GiB. */
export const DEFAULT_MAX_BACKGROUND_LOG_BYTES = 2 ** 30;

// How often the size of each running shell's log is looked at.
const OUTPUT_CHECK_INTERVAL_MS = 1_000;

function checkMaxLogBytes(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_BACKGROUND_LOG_BYTES;
  if (value === Infinity || (typeof value === 'number' && Number.isSafeInteger(value) && value > 0))
    return value;
  throw invalidArgument({
    where: 'new BackgroundShellRegistry()',
    option: 'maxLogBytes',
    expected: 'a whole number of bytes above 0, or Infinity',
    value,
  });
}

function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30 && bytes % 2 ** 30 === 0) return `${bytes / 2 ** 30} GiB`;
  if (bytes >= 2 ** 20 && bytes % 2 ** 20 === 0) return `${bytes / 2 ** 20} MiB`;
  if (bytes >= 2 ** 10 && bytes % 2 ** 10 === 0) return `${bytes / 2 ** 10} KiB`;
  return `${bytes} bytes`;
}

/** Options of `BackgroundShellRegistry.start`. */
export type StartBackgroundShellOptions = {
  /** Command line given to `/bin/bash -c`. */
  command: string;
  /** Working directory. */
  cwd: string;
  /** Short description for task lists. */
  description: string;
  /** Environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Called right after the process is spawned, before it can end (register the task here). */
  onStart?: (shell: BackgroundShell) => void;
  /** Called once when the shell ends, with its final state. */
  onEnd?: (shell: BackgroundShell) => void;
};

// Every registry that holds a shell, so a task id can be looked up without knowing which tool
// started it. One leaves when its last shell is released: a server makes one per run, and the
// set would otherwise keep every run's registry for the life of the process.
const registries = new Set<BackgroundShellRegistry>();

/** How many registries hold a shell now (for tests). */
export function registriesHoldingShells(): number {
  return registries.size;
}

type Entry = {
  shell: BackgroundShell;
  done: Promise<void>;
  killRequested: boolean;
};

// Unlike `entries`, still holds a released shell until it ends, for the exit hook.
type Running = { pid: number | undefined; recordPath?: string };

/**
 * Starts shell commands in the background, each in its own process group with its
 * output going to a file (mode 0600, created exclusively, never through a symlink), and
 * remembers them so a TaskOutput tool can read their output and a host can stop them.
 * While any shell runs, the host process's `exit` kills every group, so none outlives the
 * agent; on Linux each running shell also has a record (pid and start time) in
 * `<os.tmpdir()>/delegate-<uid>/shells`, and a registry's first start kills the groups of
 * hosts that died without that hook (SIGKILL). `release` and `dispose` delete the logs.
 */
export class BackgroundShellRegistry {
  /** Where output files are written. */
  readonly outputDirectory: string;
  private readonly killGraceMs: number;
  private readonly maxLogBytes: number;
  private readonly isDefaultDirectory: boolean;
  private readonly entries = new Map<string, Entry>();
  private readonly running = new Set<Running>();
  private started = false;
  private disposed = false;
  private readonly onProcessExit = (): void => {
    for (const shell of this.running) {
      if (shell.pid !== undefined) killProcessGroup(shell.pid, 'SIGKILL');
      if (shell.recordPath !== undefined) removeShellRecordSync(shell.recordPath);
    }
  };

  constructor(options: BackgroundShellRegistryOptions = {}) {
    this.isDefaultDirectory = options.outputDirectory === undefined;
    this.outputDirectory = options.outputDirectory ?? defaultBackgroundOutputDirectory();
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.maxLogBytes = checkMaxLogBytes(options.maxLogBytes);
  }

  /** True once `dispose` was called: the registry starts no more shells. */
  get isDisposed(): boolean {
    return this.disposed;
  }

  /** True when this registry started the task. */
  has(taskId: string): boolean {
    return this.entries.has(taskId);
  }

  /** Starts a command in the background and returns its state (status `running`). */
  async start(options: StartBackgroundShellOptions): Promise<BackgroundShell> {
    this.checkNotDisposed();
    await this.prepareDirectory();
    const taskId = createTaskId();
    const outputPath = join(this.outputDirectory, `${taskId}.log`);
    const handle = await createLogFile(outputPath);
    let child;
    try {
      // Disposed while the directory was prepared: no shell may start any more.
      this.checkNotDisposed();
      child = spawn('/bin/bash', ['-c', options.command], {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: true,
        stdio: ['ignore', handle.fd, handle.fd],
      });
    } catch (error) {
      await handle.close();
      await removeLog(outputPath).catch(() => undefined);
      throw error;
    }
    const shell: BackgroundShell = {
      taskId,
      command: options.command,
      description: options.description,
      outputPath,
      pid: child.pid,
      status: 'running',
      exitCode: null,
      startTime: Date.now(),
    };
    const entry: Entry = { shell, done: Promise.resolve(), killRequested: false };
    const running: Running = { pid: child.pid };
    const sizeWatch =
      this.maxLogBytes === Infinity
        ? undefined
        : setInterval(() => void this.checkLogSize(taskId), OUTPUT_CHECK_INTERVAL_MS).unref();
    entry.done = new Promise<void>((resolve) => {
      const end = (status: TaskStatus, exitCode: number | null): void => {
        if (shell.status !== 'running') return;
        clearInterval(sizeWatch);
        // Processes the command left behind in its group are stopped with it.
        if (shell.pid !== undefined && !entry.killRequested) {
          terminateProcessGroup(shell.pid, this.killGraceMs);
        }
        shell.status = entry.killRequested ? 'killed' : status;
        shell.exitCode = exitCode;
        shell.endTime = Date.now();
        this.running.delete(running);
        if (running.recordPath !== undefined) void removeShellRecord(running.recordPath);
        if (this.running.size === 0) process.off('exit', this.onProcessExit);
        options.onEnd?.({ ...shell });
        resolve();
      };
      child.once('error', () => end('failed', null));
      child.once('exit', (code) => end(code === 0 ? 'completed' : 'failed', code));
    });
    child.unref();
    this.entries.set(taskId, entry);
    registries.add(this);
    if (this.running.size === 0) process.on('exit', this.onProcessExit);
    this.running.add(running);
    // Before any await, so the exit handler above cannot run first.
    options.onStart?.({ ...shell });
    // The child holds its own copy of the descriptor.
    await handle.close();
    await this.record(taskId, running);
    return { ...shell };
  }

  /** Stops a running shell whose log has passed `maxLogBytes`. */
  private async checkLogSize(taskId: string): Promise<void> {
    const entry = this.entries.get(taskId);
    if (entry === undefined || entry.shell.status !== 'running') return;
    const size = await stat(entry.shell.outputPath).then(
      (stats) => stats.size,
      () => 0,
    );
    if (size <= this.maxLogBytes || entry.shell.status !== 'running') return;
    entry.shell.stopReason = `its output passed ${formatBytes(this.maxLogBytes)} (maxLogBytes), so it was stopped; the log keeps what it wrote`;
    this.kill(taskId);
  }

  private checkNotDisposed(): void {
    if (!this.disposed) return;
    throw new DelegateError(
      'ABORTED',
      `BackgroundShellRegistry.start: this registry (output directory ${this.outputDirectory}) was disposed and starts no more shells; create a new one.`,
    );
  }

  /**
   * Makes sure the output directory exists (private, for the default one). On the first start,
   * also stops the shells of hosts that died without stopping them, and prunes stale logs of the
   * default directory.
   */
  private async prepareDirectory(): Promise<void> {
    if (this.isDefaultDirectory) {
      // Checked on every start: a temp cleaner may remove the directory while the host runs.
      await ensurePrivateDirectory(join(this.outputDirectory, '..'));
      await ensurePrivateDirectory(this.outputDirectory);
    } else {
      await mkdir(this.outputDirectory, { recursive: true, mode: 0o700 }).catch(
        (error: unknown) => {
          throw toFileSystemError(error, this.outputDirectory);
        },
      );
    }
    if (this.started) return;
    this.started = true;
    await reapOrphanedShells().catch(() => undefined);
    if (this.isDefaultDirectory) await pruneStaleLogs(this.outputDirectory, Date.now());
  }

  /** Records a running shell for `reapOrphanedShells`, unless it has ended already. */
  private async record(taskId: string, running: Running): Promise<void> {
    if (running.pid === undefined) return;
    const path = await writeShellRecord(taskId, running.pid);
    if (path === undefined) return;
    if (this.running.has(running)) running.recordPath = path;
    else await removeShellRecord(path);
  }

  /**
   * Forgets a shell: kills it if it still runs and deletes its log, so its output can no
   * longer be read. A shell it kills has ended (status `killed`, its `onEnd` called) when the
   * returned promise resolves, unless it outlives the kill grace time and a second more.
   * False when this registry does not know the task.
   */
  async release(taskId: string): Promise<boolean> {
    const entry = this.entries.get(taskId);
    if (entry === undefined) return false;
    // Waited for, so whoever tracks the shell's status sees it end before the release does.
    if (this.kill(taskId)) await this.wait(taskId, this.killGraceMs + 1_000);
    this.entries.delete(taskId);
    if (this.entries.size === 0) registries.delete(this);
    // A shell still dying writes on into the unlinked file, which goes away when it ends.
    await removeLog(entry.shell.outputPath);
    return true;
  }

  /**
   * Releases every shell (running ones are killed) and deletes their logs; afterwards the
   * registry starts no more shells and task ids are no longer looked up in it.
   */
  async dispose(): Promise<void> {
    this.disposed = true;
    registries.delete(this);
    const results = await Promise.allSettled(
      [...this.entries.keys()].map((taskId) => this.release(taskId)),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Returns the current state of a background shell. */
  get(taskId: string): BackgroundShell | undefined {
    const entry = this.entries.get(taskId);
    return entry === undefined ? undefined : { ...entry.shell };
  }

  /** Lists every shell started through this registry. */
  list(): BackgroundShell[] {
    return [...this.entries.values()].map((entry) => ({ ...entry.shell }));
  }

  /** Kills a running shell's whole process group (SIGTERM, then SIGKILL); false when it is not running. */
  kill(taskId: string): boolean {
    const entry = this.entries.get(taskId);
    if (entry === undefined || entry.shell.status !== 'running' || entry.shell.pid === undefined)
      return false;
    entry.killRequested = true;
    // Children that ignore SIGTERM may remain in its group after the shell exits: SIGKILL
    // follows for as long as any is left.
    terminateProcessGroup(entry.shell.pid, this.killGraceMs);
    return true;
  }

  /** Kills every running shell. */
  killAll(): void {
    for (const taskId of this.entries.keys()) this.kill(taskId);
  }

  /** Waits until a shell ends (or the timeout passes) and returns its state. */
  async wait(taskId: string, timeoutMs = 30_000): Promise<BackgroundShell | undefined> {
    const delay = timerDelay(timeoutMs, 'BackgroundShellRegistry.wait: timeoutMs');
    const entry = this.entries.get(taskId);
    if (entry === undefined) return undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      entry.done,
      ...(delay === undefined
        ? []
        : [new Promise<void>((resolve) => (timer = setTimeout(resolve, delay)))]),
    ]);
    clearTimeout(timer);
    return { ...entry.shell };
  }

  /** Reads a shell's output so far (head and tail kept beyond `maxBytes`, default 30000). */
  async readOutput(
    taskId: string,
    options: { maxBytes?: number } = {},
  ): Promise<BackgroundShellOutput | undefined> {
    const entry = this.entries.get(taskId);
    if (entry === undefined) return undefined;
    const buffer = new HeadTailBuffer(options.maxBytes ?? 30_000);
    const handle = await open(entry.shell.outputPath, 'r').catch(() => undefined);
    if (handle !== undefined) {
      try {
        await readHeadAndTail(handle, buffer, options.maxBytes ?? 30_000);
      } finally {
        await handle.close();
      }
    }
    return { ...entry.shell, output: buffer.toString(), cutBytes: buffer.cutBytes };
  }
}

async function readSlice(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const bytes = Buffer.alloc(length);
  const { bytesRead } = await handle.read(bytes, 0, length, position);
  return bytes.subarray(0, bytesRead);
}

/** Feeds only the first and last halves of a (possibly huge) output file into `buffer`. */
async function readHeadAndTail(
  handle: FileHandle,
  buffer: HeadTailBuffer,
  maxBytes: number,
): Promise<void> {
  const size = (await handle.stat()).size;
  if (size <= maxBytes) {
    buffer.write(await readSlice(handle, 0, size));
    return;
  }
  const headBytes = Math.ceil(maxBytes / 2);
  const tailBytes = Math.floor(maxBytes / 2);
  buffer.write(await readSlice(handle, 0, headBytes));
  buffer.skip(size - headBytes - tailBytes);
  buffer.write(await readSlice(handle, size - tailBytes, tailBytes));
}

let defaultRegistry: BackgroundShellRegistry | undefined;

/** The registry the Bash tool uses when none is configured (created on first use). */
export function getDefaultBackgroundShellRegistry(): BackgroundShellRegistry {
  if (defaultRegistry === undefined || defaultRegistry.isDisposed)
    defaultRegistry = new BackgroundShellRegistry();
  return defaultRegistry;
}

/**
 * Releases a background shell by task id, in whichever registry started it: kills it if it
 * still runs (and waits for it to end, as `BackgroundShellRegistry.release` does) and deletes
 * its log. False when no registry knows the task.
 */
export function releaseBackgroundShell(taskId: string): Promise<boolean> {
  const registry = [...registries].find((candidate) => candidate.has(taskId));
  return registry === undefined ? Promise.resolve(false) : registry.release(taskId);
}

/**
 * Reads a background shell's status and output by task id, for a TaskOutput tool. Looks
 * in `registry` when given, else in every registry (task ids are unique).
 */
export function getBackgroundShellOutput(
  taskId: string,
  options: { registry?: BackgroundShellRegistry; maxBytes?: number } = {},
): Promise<BackgroundShellOutput | undefined> {
  const registry = options.registry ?? [...registries].find((candidate) => candidate.has(taskId));
  if (registry === undefined) return Promise.resolve(undefined);
  return registry.readOutput(
    taskId,
    options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes },
  );
}
