import { DelegateError } from '@delegate/core';
import { type Job, Queue, WaitingError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type {
  RunJob,
  RunJobHandler,
  RunQueue,
  RunQueueShutdown,
  RunQueueStats,
} from './run-queue.js';
import { type RunningJob, drainRunningJobs } from './drain-running-jobs.js';

const QUEUE_NAME = 'runs';

type Active = RunningJob & { lost: AbortController };

/** Options of {@link BullRunQueue}. */
export type BullRunQueueOptions = {
  /** Redis URL (`redis://host:port/db`). */
  url: string;
  /** Prefix of every Redis key and channel (one deployment, or one test, per prefix). */
  prefix: string;
  /** Most jobs this process works on at once. */
  concurrency: number;
  /** Lock time of a job: a worker silent this long loses it to another worker, in ms. */
  lockDurationMs: number;
  /** Times a job may move to another worker before BullMQ fails it. */
  maxStalledCount: number;
  /** Called when a handler throws (the queue goes on with the next job). */
  onHandlerError?: (job: RunJob, error: unknown) => void;
  /** Called when the connection to Redis is lost (with the error) and when it is back. */
  onConnection?: (change: { state: 'lost'; error: unknown } | { state: 'back' }) => void;
};

/** How long an enqueue waits for Redis before it reports the queue unreachable, in ms. */
const ENQUEUE_TIMEOUT_MS = 5_000;

/** `promise`, or a rejection after `ms`. */
function withTimeout<T>(promise: Promise<T> | undefined, ms: number): Promise<T | undefined> {
  if (!promise) return Promise.resolve(undefined);
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Opens a Redis connection fit for BullMQ (blocking commands wait without a retry limit). */
export function openRedis(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
  // Reconnection is automatic; an error event without a listener would crash the process.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * A `RunQueue` on BullMQ: every server enqueues into one Redis queue, every worker process
 * takes jobs with its own concurrency. A worker that dies stops renewing its job locks;
 * BullMQ's stalled-job check hands those jobs to another worker, whose handler sees
 * `attempt > 1`. Fairness across keys is approximated with priorities: a job's priority is
 * its place in its key's line when it arrives, so keys take turns.
 */
export class BullRunQueue implements RunQueue {
  /** Jobs live in Redis, shared with other processes. */
  readonly shared = true;
  private readonly options: BullRunQueueOptions;
  private readonly connection: Redis;
  private readonly queue: Queue;
  private worker: Worker | undefined;
  private readonly active = new Map<string, Active>();
  private readonly onHandlerError: (job: RunJob, error: unknown) => void;
  private accepting = true;

  constructor(options: BullRunQueueOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `BullRunQueue: concurrency must be a whole number of at least 1, got ${options.concurrency}.`,
      );
    }
    this.options = options;
    this.onHandlerError = options.onHandlerError ?? (() => undefined);
    this.connection = openRedis(options.url);
    this.watchConnection(options.onConnection);
    this.queue = new Queue(QUEUE_NAME, { connection: this.connection, prefix: options.prefix });
    this.queue.on('error', () => undefined);
  }

  /** Tells of a lost connection once, and again once it is back (ioredis reconnects by itself). */
  private watchConnection(onConnection: BullRunQueueOptions['onConnection']): void {
    if (!onConnection) return;
    let lost = false;
    this.connection.on('error', (error: unknown) => {
      if (lost || !this.accepting) return;
      lost = true;
      onConnection({ state: 'lost', error });
    });
    this.connection.on('ready', () => {
      if (!lost) return;
      lost = false;
      onConnection({ state: 'back' });
    });
  }

  private get fairnessKey(): string {
    return `${this.options.prefix}:${QUEUE_NAME}:fairness`;
  }

  /** Adds a job unless the run already has one waiting or running. */
  async enqueue(job: RunJob): Promise<void> {
    if (!this.accepting) {
      throw new DelegateError(
        'LIMIT_EXCEEDED',
        `The server is shutting down and takes no new work (run ${job.runId}).`,
      );
    }
    if (this.active.has(job.runId)) return;
    // Commands wait for Redis to come back (BullMQ needs that): a request must not.
    try {
      await withTimeout(this.add(job), ENQUEUE_TIMEOUT_MS);
    } catch (error) {
      throw new DelegateError(
        'LIMIT_EXCEEDED',
        `The run queue (Redis) did not answer within ${ENQUEUE_TIMEOUT_MS / 1_000} s when run ${job.runId} was queued; check that Redis runs.`,
        { cause: error },
      );
    }
  }

  private async add(job: RunJob): Promise<void> {
    const existing = await this.queue.getJob(job.runId);
    if (existing) return;
    const place = await this.connection.hincrby(this.fairnessKey, job.fairnessKey, 1);
    await this.queue.add(
      'run',
      {
        runId: job.runId,
        fairnessKey: job.fairnessKey,
        ...(job.takeover ? { takeover: true } : {}),
      },
      {
        jobId: job.runId,
        priority: Math.max(1, Math.min(place, 2_000_000)),
        removeOnComplete: true,
        removeOnFail: true,
      },
    );
  }

  /** True when the run has a job in Redis (waiting, delayed or active). */
  async hasJob(runId: string): Promise<boolean> {
    return (await this.queue.getJob(runId)) !== undefined;
  }

  /** Removes a job that no worker has taken. */
  async remove(runId: string): Promise<boolean> {
    const job = (await this.queue.getJob(runId)) as Job | undefined;
    if (!job) return false;
    const state = await job.getState();
    if (state !== 'waiting' && state !== 'prioritized' && state !== 'delayed') return false;
    try {
      await job.remove();
    } catch {
      // A worker took it meanwhile.
      return false;
    }
    await this.leaveLine(job.data as RunJob);
    return true;
  }

  /** Starts a BullMQ worker in this process. */
  start(handler: RunJobHandler): void {
    if (this.worker) throw new DelegateError('INVALID_ARGUMENT', 'The queue was already started.');
    this.worker = new Worker(QUEUE_NAME, (job, token) => this.process(handler, job, token), {
      connection: openRedis(this.options.url),
      prefix: this.options.prefix,
      concurrency: this.options.concurrency,
      lockDuration: this.options.lockDurationMs,
      stalledInterval: Math.max(500, Math.floor(this.options.lockDurationMs / 2)),
      maxStalledCount: this.options.maxStalledCount,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    });
    this.worker.on('error', () => undefined);
    // A worker that was stalled (paused, starved) past its lock time finds its lock taken.
    this.worker.on('lockRenewalFailed', (jobIds: string[]) => {
      for (const jobId of jobIds) this.active.get(jobId)?.lost.abort();
    });
  }

  /** Who holds the lock of the job `jobId` now, as seen from the holder of `token`. */
  private async lockHolder(
    jobId: string,
    token: string | undefined,
  ): Promise<'this' | 'other' | 'none'> {
    const holder = await withTimeout(
      this.connection.get(`${this.options.prefix}:${QUEUE_NAME}:${jobId}:lock`),
      2_000,
    );
    if (holder === null || holder === undefined) return 'none';
    return holder === token ? 'this' : 'other';
  }

  private async process(handler: RunJobHandler, job: Job, token: string | undefined) {
    const data = job.data as RunJob;
    const lost = new AbortController();
    const item: RunJob = {
      runId: data.runId,
      fairnessKey: data.fairnessKey,
      attempt: Math.max(1, job.attemptsStarted),
      failovers: job.stalledCounter,
      ...(data.takeover ? { takeover: true } : {}),
      lockLost: lost.signal,
      lockHolder: () => this.lockHolder(job.id ?? data.runId, token),
    };
    if (item.attempt === 1) await this.leaveLine(item);
    const controller = new AbortController();
    const outcome: { value: void | 'handed-back' } = { value: undefined };
    const done = Promise.resolve()
      .then(() => handler(item, controller.signal))
      .then((value) => {
        outcome.value = value;
      })
      .catch((error: unknown) => {
        try {
          this.onHandlerError(item, error);
        } catch {
          // A failing error callback must not stop the queue.
        }
      });
    this.active.set(item.runId, { job: item, controller, done, lost });
    try {
      await done;
    } finally {
      this.active.delete(item.runId);
    }
    if (outcome.value === 'handed-back') {
      // Back to the wait list at once, so another worker resumes it without waiting for the lock.
      await job.moveToWait(token);
      throw new WaitingError();
    }
  }

  private async leaveLine(job: RunJob): Promise<void> {
    await this.connection.hincrby(this.fairnessKey, job.fairnessKey, -1).catch(() => undefined);
  }

  /** Stops taking jobs, lets running ones finish for `timeoutMs`, then aborts them. */
  async shutdown(options: { timeoutMs: number }): Promise<RunQueueShutdown> {
    const wasAccepting = this.accepting;
    this.accepting = false;
    if (!wasAccepting && !this.worker) return { finished: [], aborted: [], notStarted: [] };
    // The jobs running as the shutdown begins: one that ends while the worker pauses still
    // counts as finished by it.
    const running = [...this.active.values()];
    await this.worker?.pause(true).catch(() => undefined);
    const { finished, aborted } = await drainRunningJobs({
      running,
      timeoutMs: options.timeoutMs,
      abortMessage: (runId) =>
        `The worker shut down before run ${runId} finished its turn (grace time ${options.timeoutMs} ms); another worker continues it.`,
    });
    // Let the handlers' last queue calls (completion, hand-back) land before closing.
    await withTimeout(this.worker?.close(), 5_000).catch(() => undefined);
    this.worker = undefined;
    await withTimeout(this.queue.close(), 2_000).catch(() => undefined);
    await withTimeout(this.connection.quit(), 1_000).catch(() => undefined);
    this.connection.disconnect();
    // Jobs of the shared queue stay in Redis for the other workers.
    return { finished, aborted, notStarted: [] };
  }

  /** Counts across every worker of the queue. */
  async stats(): Promise<RunQueueStats> {
    const counts = await this.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
    return {
      queued: (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0),
      active: counts.active ?? 0,
      // A process that takes no runs (an API-only node) works on none at once.
      concurrency: this.worker ? this.options.concurrency : 0,
      accepting: this.accepting,
    };
  }

  /** True while accepting and Redis answers. */
  async ready(): Promise<boolean> {
    if (!this.accepting) return false;
    return (await withTimeout(this.connection.ping(), 1_000).catch(() => undefined)) === 'PONG';
  }
}
