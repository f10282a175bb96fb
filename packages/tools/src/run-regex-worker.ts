import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DelegateError } from '@delegate/core';

/** A regular expression as it crosses into the worker. */
export type RegexSpec = { source: string; flags: string };

/** Keep the indexes of the paths a regex matches. */
export type FilterPathsTask = { kind: 'filter-paths'; regex: RegexSpec; paths: string[] };

/** Read files and search them line by line. */
export type SearchFilesTask = {
  kind: 'search-files';
  /** Absolute paths to read. */
  paths: string[];
  /** Relative paths the `glob` filter is tested against (same order as `paths`). */
  relativePaths: string[];
  /** Files whose relative path does not match are skipped. */
  glob?: RegexSpec;
  /** The line regex. */
  regex: RegexSpec;
  /** Bytes every matching file must contain (a cheap prefilter), if known. */
  literal?: string;
  /** What to return for each matching file. */
  mode: 'files_with_matches' | 'content' | 'count';
  /** Context lines kept before and after each match (content mode). */
  before: number;
  after: number;
  /** Larger files are skipped. */
  maxFileBytes: number;
  /** Real path every file read must lie in (checked on the open descriptor); others are skipped. */
  confineTo: string;
  /** Also read files with more than one hard link (skipped by default). */
  allowHardLinks: boolean;
};

/** One file with matches, as the worker reports it. */
export type FileSearchResult = {
  /** Index into `paths`. */
  index: number;
  /** 0-based indexes of matching lines (empty in files_with_matches mode). */
  matchedLines: number[];
  /** Number of lines in the file (0 in files_with_matches mode). */
  lineCount: number;
  /** Lines shown in content mode (matches and their context), by 0-based index. */
  lines: Record<number, string>;
};

type TaskResult<Task> = Task extends FilterPathsTask ? number[] : FileSearchResult[];

// Plain JavaScript, run with `eval: true` so it works from source and from the bundle.
// Files are opened with O_NOFOLLOW (a symlink swapped in after the walk is skipped) and
// O_NONBLOCK (a FIFO cannot block the open), checked to be regular files with one hard
// link whose open descriptor lies inside `confineTo`, and read up to the size cap only.
const workerSource = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { sep } = require('node:path');
// The task being run; a worker runs one task at a time and is reused for the next.
let task;

function locationOf(fd, path) {
  try {
    const link = fs.readlinkSync('/proc/self/fd/' + fd);
    // A live file can be named "x (deleted)": the kernel's mark is taken off only when the
    // file has no name left (see descriptor-location.ts).
    if (!link.endsWith(' (deleted)')) return link;
    return fs.fstatSync(fd).nlink === 0 ? link.slice(0, -' (deleted)'.length) : link;
  } catch {}
  try {
    const real = fs.realpathSync(path);
    const opened = fs.fstatSync(fd);
    const found = fs.statSync(real);
    return opened.ino === found.ino && opened.dev === found.dev ? real : undefined;
  } catch {
    return undefined;
  }
}

function isInside(child, parent) {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

function readCapped(path, maxBytes) {
  let fd;
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stats = fs.fstatSync(fd);
    if (!stats.isFile() || stats.size > maxBytes) return undefined;
    if (!task.allowHardLinks && stats.nlink > 1) return undefined;
    // A parent swapped for a symbolic link after the walk: the descriptor shows it.
    const location = locationOf(fd, path);
    if (location === undefined || !isInside(location, task.confineTo)) return undefined;
    let buffer = Buffer.allocUnsafe(stats.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) return undefined;
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(bigger, 0, 0, length);
        buffer = bigger;
      }
      const read = fs.readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    return length > maxBytes ? undefined : buffer.subarray(0, length);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function filterPaths() {
  const regex = new RegExp(task.regex.source, task.regex.flags);
  const kept = [];
  for (let index = 0; index < task.paths.length; index++) {
    if (regex.test(task.paths[index])) kept.push(index);
  }
  return kept;
}

function searchFiles() {
  const regex = new RegExp(task.regex.source, task.regex.flags);
  const multiline = new RegExp(task.regex.source, task.regex.flags + 'm');
  const glob = task.glob === undefined ? undefined : new RegExp(task.glob.source, task.glob.flags);
  const literal = task.literal === undefined ? undefined : Buffer.from(task.literal, 'utf8');
  const results = [];
  for (let index = 0; index < task.paths.length; index++) {
    if (glob !== undefined && !glob.test(task.relativePaths[index])) continue;
    const bytes = readCapped(task.paths[index], task.maxFileBytes);
    if (bytes === undefined) continue;
    if (literal !== undefined && bytes.indexOf(literal) === -1) continue;
    if (bytes.subarray(0, 8000).includes(0)) continue;
    const text = bytes.toString('utf8');
    if (task.mode === 'files_with_matches') {
      const match = multiline.exec(text);
      if (match === null) continue;
      // A match spanning a line break is not a line match; confirm line by line below.
      if (!match[0].includes('\\n')) {
        results.push({ index, matchedLines: [], lineCount: 0, lines: {} });
        continue;
      }
    }
    const lines = text.split(/\\r?\\n/);
    if (lines[lines.length - 1] === '') lines.pop();
    const matchedLines = [];
    for (let line = 0; line < lines.length; line++) {
      if (regex.test(lines[line])) matchedLines.push(line);
    }
    if (matchedLines.length === 0) continue;
    const shown = {};
    if (task.mode === 'content') {
      for (const line of matchedLines) {
        const last = Math.min(lines.length - 1, line + task.after);
        for (let each = Math.max(0, line - task.before); each <= last; each++) shown[each] = lines[each];
      }
    }
    results.push({
      index,
      matchedLines: task.mode === 'files_with_matches' ? [] : matchedLines,
      lineCount: lines.length,
      lines: shown,
    });
  }
  return results;
}

parentPort.on('message', (message) => {
  task = message;
  let reply;
  try {
    reply = { ok: true, result: task.kind === 'filter-paths' ? filterPaths() : searchFiles() };
  } catch (error) {
    reply = { ok: false, message: error && error.message ? error.message : String(error) };
  }
  task = undefined;
  parentPort.postMessage(reply);
});
`;

/** What a worker answers for one task. */
type WorkerReply<Result> = { ok: true; result: Result } | { ok: false; message: string };

/** Idle workers kept for the next task: starting a thread costs far more than a search. */
const MAX_IDLE_WORKERS = 2;
/** An idle worker past this is stopped, so a quiet process does not keep its threads. */
const IDLE_WORKER_MS = 10_000;

type PooledWorker = { worker: Worker; idleTimer: NodeJS.Timeout | undefined };

const idleWorkers: PooledWorker[] = [];
/** Tasks running at once; more threads than cores would only take turns. */
const MAX_BUSY_WORKERS = Math.max(2, availableParallelism());
let busyWorkers = 0;
/** Tasks waiting for a worker, oldest first. */
const waiting: Array<() => void> = [];

function releaseSlot(): void {
  busyWorkers -= 1;
  const next = waiting.shift();
  if (next) next();
}

function takeWorker(): PooledWorker {
  const pooled = idleWorkers.pop();
  if (pooled === undefined)
    return { worker: new Worker(workerSource, { eval: true }), idleTimer: undefined };
  if (pooled.idleTimer) clearTimeout(pooled.idleTimer);
  pooled.idleTimer = undefined;
  pooled.worker.ref();
  return pooled;
}

function returnWorker(pooled: PooledWorker): void {
  if (idleWorkers.length >= MAX_IDLE_WORKERS) {
    void pooled.worker.terminate();
    return;
  }
  // An idle worker never keeps the process alive.
  pooled.worker.unref();
  pooled.idleTimer = setTimeout(() => {
    const at = idleWorkers.indexOf(pooled);
    if (at !== -1) idleWorkers.splice(at, 1);
    void pooled.worker.terminate();
  }, IDLE_WORKER_MS);
  pooled.idleTimer.unref();
  idleWorkers.push(pooled);
}

/**
 * Runs regex work (Glob's path filter, Grep's file search) in a worker thread with a
 * time limit. Workers are reused (at most two stay idle, for ten seconds, unref'd): starting
 * a thread costs far more than a typical search. At most one task per core runs at a time;
 * the others wait their turn, and their time limit starts when a worker takes them. JavaScript regexes backtrack, so a pattern such as `(a+)+$` can run for
 * hours on one line and, on the main thread, nothing could interrupt it; in a worker,
 * the timeout (LIMIT_EXCEEDED) and the abort signal (ABORTED) terminate it.
 */
export function runRegexWorker<Task extends FilterPathsTask | SearchFilesTask>(options: {
  task: Task;
  /** Time limit once a worker takes the task; undefined for none. */
  timeoutMs: number | undefined;
  signal: AbortSignal;
  /** Names the work in error messages, e.g. `Grep for "foo"`. */
  what: string;
}): Promise<TaskResult<Task>> {
  const { signal, what } = options;
  if (signal.aborted) {
    return Promise.reject(new DelegateError('ABORTED', `${what} was aborted.`));
  }
  return new Promise((resolve, reject) => {
    const run = (): void => {
      busyWorkers += 1;
      signal.removeEventListener('abort', onAbortWhileWaiting);
      runOnWorker({ ...options, resolve, reject });
    };
    const onAbortWhileWaiting = (): void => {
      const at = waiting.indexOf(run);
      if (at !== -1) waiting.splice(at, 1);
      reject(new DelegateError('ABORTED', `${what} was aborted.`));
    };
    if (busyWorkers < MAX_BUSY_WORKERS) {
      run();
      return;
    }
    // The time limit starts when a worker takes the task, not while it waits.
    signal.addEventListener('abort', onAbortWhileWaiting, { once: true });
    waiting.push(run);
  });
}

function runOnWorker<Task extends FilterPathsTask | SearchFilesTask>(options: {
  task: Task;
  timeoutMs: number | undefined;
  signal: AbortSignal;
  what: string;
  resolve: (result: TaskResult<Task>) => void;
  reject: (error: unknown) => void;
}): void {
  const { task, timeoutMs, signal, what, resolve, reject } = options;
  const pooled = takeWorker();
  const { worker } = pooled;
  let settled = false;
  // `reusable`: the worker answered and is idle again; otherwise it is stopped (it may
  // still be running a runaway regex, or it failed).
  const settle = (outcome: () => void, reusable = false): void => {
    if (settled) return;
    settled = true;
    if (timer) clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    worker.off('message', onMessage);
    worker.off('error', onError);
    worker.off('exit', onExit);
    if (reusable) returnWorker(pooled);
    else void worker.terminate();
    releaseSlot();
    outcome();
  };
  const onAbort = (): void =>
    settle(() => reject(new DelegateError('ABORTED', `${what} was aborted.`)));
  const onMessage = (reply: WorkerReply<TaskResult<Task>>): void =>
    settle(
      () =>
        reply.ok
          ? resolve(reply.result)
          : reject(new DelegateError('TOOL_FAILED', `${what} failed: ${reply.message}`)),
      true,
    );
  const onError = (error: Error): void =>
    settle(() =>
      reject(
        new DelegateError('TOOL_FAILED', `${what} failed: ${error.message}`, { cause: error }),
      ),
    );
  const onExit = (code: number): void =>
    settle(() =>
      reject(new DelegateError('TOOL_FAILED', `${what} failed: its worker exited with ${code}.`)),
    );
  const timer =
    timeoutMs !== undefined &&
    setTimeout(
      () =>
        settle(() =>
          reject(
            new DelegateError(
              'LIMIT_EXCEEDED',
              `${what} was stopped after ${timeoutMs} ms. The pattern may backtrack catastrophically ` +
                '(nested or adjacent quantifiers such as (a+)+ or .*.*.*) or the search is too large; ' +
                'simplify the pattern or narrow the path or glob.',
              { details: { timeoutMs } },
            ),
          ),
        ),
      timeoutMs,
    );
  if (signal.aborted) {
    onAbort();
    return;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  worker.on('message', onMessage);
  worker.once('error', onError);
  worker.once('exit', onExit);
  worker.postMessage(task);
}
