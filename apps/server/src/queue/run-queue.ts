/** One unit of work: run the next turn of a run. */
export type RunJob = {
  /** Run to work on. */
  runId: string;
  /** Jobs with the same key run in arrival order; different keys take turns (fairness). */
  fairnessKey: string;
  /** How many times a worker has started this job, this time included (shared queues; default 1). */
  attempt?: number;
  /** How many times the job was taken from a worker that stopped answering (shared queues). */
  failovers?: number;
  /**
   * Shared queues: a job queued for a run the store says is running, whose worker is gone
   * (its job was lost): the worker that takes it takes the run over.
   */
  takeover?: boolean;
  /** Shared queues: aborts when renewing this job's lock failed (another worker may hold it). */
  lockLost?: AbortSignal;
  /**
   * Shared queues: who holds the job's lock now: this worker, another one, or nobody (the
   * job is gone from the queue: finished elsewhere, or the queue lost its data).
   */
  lockHolder?: () => Promise<'this' | 'other' | 'none'>;
};

/**
 * Does a job. `signal` aborts when the queue shuts down and the job's grace time is over;
 * the handler must then stop the run and record it as interrupted before resolving, or
 * (on a shared queue) record it as queued again and resolve `'handed-back'`, so that
 * another worker continues it.
 */
export type RunJobHandler = (job: RunJob, signal: AbortSignal) => Promise<void | 'handed-back'>;

/** What a queue reports about itself. */
export type RunQueueStats = {
  /** Jobs waiting for a slot. */
  queued: number;
  /** Jobs being worked on. */
  active: number;
  /** Most jobs worked on at once. */
  concurrency: number;
  /** False once shutdown has begun. */
  accepting: boolean;
};

/** What a shutdown did. */
export type RunQueueShutdown = {
  /** Runs whose jobs finished within the grace time. */
  finished: string[];
  /** Runs whose jobs were aborted when the grace time ran out. */
  aborted: string[];
  /** Runs still waiting that never started (they stay queued in the store). */
  notStarted: string[];
};

/**
 * Hands runs to workers: at most `concurrency` at once, fairly across `fairnessKey`s, and
 * one job per run at a time. The embedded implementation runs jobs in this process; a
 * distributed one (BullMQ on Redis) runs them on several workers behind the same
 * interface. The store, not the queue, is the record of what each run is doing: a queue
 * that loses its jobs is refilled from the runs still `queued` in the store.
 */
export interface RunQueue {
  /** True when jobs live outside this process and other workers take them too. */
  readonly shared?: boolean;
  /** Adds a job; refused with a `LIMIT_EXCEEDED` error once shutdown has begun. */
  enqueue(job: RunJob): Promise<void>;
  /** Takes a job that has not started off the queue; true when one was removed. */
  remove(runId: string): Promise<boolean>;
  /** Starts handing jobs to `handler`; call once. */
  start(handler: RunJobHandler): void;
  /**
   * Stops accepting jobs, waits up to `timeoutMs` for running ones, then aborts the rest
   * and waits for their handlers to record them.
   */
  shutdown(options: { timeoutMs: number }): Promise<RunQueueShutdown>;
  /** Shared queues: true when the run has a job (waiting or being worked on) in the queue. */
  hasJob?(runId: string): Promise<boolean>;
  /** Current counts. */
  stats(): Promise<RunQueueStats>;
  /** True while jobs are accepted and the backing service (if any) answers. */
  ready(): Promise<boolean>;
}
