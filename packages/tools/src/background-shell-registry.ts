import { spawn } from 'node:child_process';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTaskId, type TaskStatus, timerDelay } from '@delegate/core';
import { HeadTailBuffer } from './head-tail-buffer.js';
import { killProcessGroup } from './process-group.js';

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
  /** Directory for output files (default `os.tmpdir()/delegate-tasks`). */
  outputDirectory?: string;
  /** Time between SIGTERM and SIGKILL when a shell is killed (default 2000 ms). */
  killGraceMs?: number;
};

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

// Every registry, so a task id can be looked up without knowing which tool started it.
const registries = new Set<BackgroundShellRegistry>();

type Entry = {
  shell: BackgroundShell;
  done: Promise<void>;
  killRequested: boolean;
};

/**
 * Starts shell commands in the background, each in its own process group with its
 * output going to a file, and remembers them so a TaskOutput tool can read their
 * output and a host can stop them. While any shell runs, the host process's `exit`
 * kills every group, so none outlives the agent.
 */
export class BackgroundShellRegistry {
  /** Where output files are written. */
  readonly outputDirectory: string;
  private readonly killGraceMs: number;
  private readonly entries = new Map<string, Entry>();
  private running = 0;
  private readonly onProcessExit = (): void => {
    for (const entry of this.entries.values()) {
      if (entry.shell.status === 'running' && entry.shell.pid !== undefined) {
        killProcessGroup(entry.shell.pid, 'SIGKILL');
      }
    }
  };

  constructor(options: BackgroundShellRegistryOptions = {}) {
    this.outputDirectory = options.outputDirectory ?? join(tmpdir(), 'delegate-tasks');
    this.killGraceMs = options.killGraceMs ?? 2000;
    registries.add(this);
  }

  /** True when this registry started the task. */
  has(taskId: string): boolean {
    return this.entries.has(taskId);
  }

  /** Starts a command in the background and returns its state (status `running`). */
  async start(options: StartBackgroundShellOptions): Promise<BackgroundShell> {
    await mkdir(this.outputDirectory, { recursive: true });
    const taskId = createTaskId();
    const outputPath = join(this.outputDirectory, `${taskId}.log`);
    const handle = await open(outputPath, 'w');
    let child;
    try {
      child = spawn('/bin/bash', ['-c', options.command], {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: true,
        stdio: ['ignore', handle.fd, handle.fd],
      });
    } catch (error) {
      await handle.close();
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
    entry.done = new Promise<void>((resolve) => {
      const end = (status: TaskStatus, exitCode: number | null): void => {
        if (shell.status !== 'running') return;
        // Processes the command left behind in its group are stopped with it.
        if (
          shell.pid !== undefined &&
          !entry.killRequested &&
          killProcessGroup(shell.pid, 'SIGTERM')
        ) {
          const pid = shell.pid;
          setTimeout(() => killProcessGroup(pid, 'SIGKILL'), this.killGraceMs).unref();
        }
        shell.status = entry.killRequested ? 'killed' : status;
        shell.exitCode = exitCode;
        shell.endTime = Date.now();
        this.running--;
        if (this.running === 0) process.off('exit', this.onProcessExit);
        options.onEnd?.({ ...shell });
        resolve();
      };
      child.once('error', () => end('failed', null));
      child.once('exit', (code) => end(code === 0 ? 'completed' : 'failed', code));
    });
    child.unref();
    this.entries.set(taskId, entry);
    if (this.running === 0) process.on('exit', this.onProcessExit);
    this.running++;
    // Before any await, so the exit handler above cannot run first.
    options.onStart?.({ ...shell });
    // The child holds its own copy of the descriptor.
    await handle.close();
    return { ...shell };
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
    const pid = entry.shell.pid;
    killProcessGroup(pid, 'SIGTERM');
    // Sent even if the shell exits first: children that ignored SIGTERM may remain in its group.
    setTimeout(() => killProcessGroup(pid, 'SIGKILL'), this.killGraceMs);
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
  defaultRegistry ??= new BackgroundShellRegistry();
  return defaultRegistry;
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
