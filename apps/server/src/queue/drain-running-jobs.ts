import { DelegateError } from '@delegate/core';
import type { RunJob } from './run-queue.js';

/** A job a queue is running in this process. */
export type RunningJob = { job: RunJob; controller: AbortController; done: Promise<void> };

/**
 * Lets running jobs finish for `timeoutMs`, then aborts the rest with `abortMessage(runId)`
 * and waits for them to settle. Returns which run ids finished and which were aborted.
 */
export async function drainRunningJobs(options: {
  running: readonly RunningJob[];
  timeoutMs: number;
  abortMessage: (runId: string) => string;
}): Promise<{ finished: string[]; aborted: string[] }> {
  const finished: string[] = [];
  const aborted: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
  });
  await Promise.all(
    options.running.map(async (entry) => {
      const outcome = await Promise.race([entry.done.then(() => 'done' as const), graceOver]);
      if (outcome === 'done') {
        finished.push(entry.job.runId);
        return;
      }
      aborted.push(entry.job.runId);
      entry.controller.abort(new DelegateError('ABORTED', options.abortMessage(entry.job.runId)));
      await entry.done;
    }),
  );
  clearTimeout(timer);
  return { finished, aborted };
}
