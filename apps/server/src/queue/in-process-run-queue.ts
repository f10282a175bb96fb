import { DelegateError } from '@delegate/core';
import type {
  RunJob,
  RunJobHandler,
  RunQueue,
  RunQueueShutdown,
  RunQueueStats,
} from './run-queue.js';
import { type RunningJob, drainRunningJobs } from './drain-running-jobs.js';

type Active = RunningJob;

/**
 * A `RunQueue` in this process: FIFO per fairness key, round-robin across keys, at most
 * `concurrency` jobs at once, at most one job per run.
 */
export class InProcessRunQueue implements RunQueue {
  private readonly concurrency: number;
  private readonly onHandlerError: (job: RunJob, error: unknown) => void;
  /** Waiting jobs per key; the Map's order is the round-robin order of keys. */
  private readonly waiting = new Map<string, RunJob[]>();
  private readonly active = new Map<string, Active>();
  private handler: RunJobHandler | undefined;
  private accepting = true;

  constructor(options: {
    concurrency: number;
    /** Called when a handler throws (the queue goes on with the next job). */
    onHandlerError?: (job: RunJob, error: unknown) => void;
  }) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `InProcessRunQueue: concurrency must be a whole number of at least 1, got ${options.concurrency}.`,
      );
    }
    this.concurrency = options.concurrency;
    this.onHandlerError = options.onHandlerError ?? (() => undefined);
  }

  /** Adds a job at the end of its key's line. */
  async enqueue(job: RunJob): Promise<void> {
    if (!this.accepting) {
      throw new DelegateError(
        'LIMIT_EXCEEDED',
        `The server is shutting down and takes no new work (run ${job.runId}).`,
      );
    }
    if (this.active.has(job.runId) || this.isWaiting(job.runId)) return;
    const line = this.waiting.get(job.fairnessKey);
    if (line) line.push(job);
    else this.waiting.set(job.fairnessKey, [job]);
    this.pump();
  }

  /** Removes a waiting job. */
  async remove(runId: string): Promise<boolean> {
    for (const [key, line] of this.waiting) {
      const index = line.findIndex((job) => job.runId === runId);
      if (index === -1) continue;
      line.splice(index, 1);
      if (line.length === 0) this.waiting.delete(key);
      return true;
    }
    return false;
  }

  /** Starts working. */
  start(handler: RunJobHandler): void {
    if (this.handler) throw new DelegateError('INVALID_ARGUMENT', 'The queue was already started.');
    this.handler = handler;
    this.pump();
  }

  /** Stops accepting, lets running jobs finish for `timeoutMs`, then aborts them. */
  async shutdown(options: { timeoutMs: number }): Promise<RunQueueShutdown> {
    this.accepting = false;
    const notStarted = [...this.waiting.values()].flat().map((job) => job.runId);
    this.waiting.clear();
    const { finished, aborted } = await drainRunningJobs({
      running: [...this.active.values()],
      timeoutMs: options.timeoutMs,
      abortMessage: (runId) =>
        `The server shut down before run ${runId} finished its turn (grace time ${options.timeoutMs} ms).`,
    });
    return { finished, aborted, notStarted };
  }

  /** Current counts. */
  async stats(): Promise<RunQueueStats> {
    let queued = 0;
    for (const line of this.waiting.values()) queued += line.length;
    return {
      queued,
      active: this.active.size,
      concurrency: this.concurrency,
      accepting: this.accepting,
    };
  }

  /** True until shutdown begins. */
  async ready(): Promise<boolean> {
    return this.accepting && this.handler !== undefined;
  }

  private isWaiting(runId: string): boolean {
    for (const line of this.waiting.values())
      if (line.some((job) => job.runId === runId)) return true;
    return false;
  }

  private takeNext(): RunJob | undefined {
    for (const [key, line] of this.waiting) {
      const job = line.shift();
      this.waiting.delete(key);
      // The key goes to the back of the round-robin order while it still has work.
      if (line.length > 0) this.waiting.set(key, line);
      if (job) return job;
    }
    return undefined;
  }

  private pump(): void {
    const handler = this.handler;
    if (!handler || !this.accepting) return;
    while (this.active.size < this.concurrency) {
      const job = this.takeNext();
      if (!job) return;
      const controller = new AbortController();
      const done = Promise.resolve()
        .then(async () => {
          // A handed-back run stays queued in the store; recover() queues it again on start.
          await handler(job, controller.signal);
        })
        .catch((error: unknown) => {
          try {
            this.onHandlerError(job, error);
          } catch {
            // A failing error callback must not stop the queue.
          }
        })
        .finally(() => {
          this.active.delete(job.runId);
          this.pump();
        });
      this.active.set(job.runId, { job, controller, done });
    }
  }
}
