import { describe, expect, it } from 'vitest';
import { InProcessRunQueue } from './in-process-run-queue.js';
import { describeRunQueueContract } from './run-queue-contract.js';

describeRunQueueContract(
  'in-process',
  async ({ concurrency }) => new InProcessRunQueue({ concurrency }),
);

describe('InProcessRunQueue', () => {
  it('refuses a concurrency below 1 with a message naming the value', () => {
    expect(() => new InProcessRunQueue({ concurrency: 0 })).toThrow(/at least 1, got 0/);
  });

  it('reports a handler error to onHandlerError', async () => {
    const errors: string[] = [];
    const queue = new InProcessRunQueue({
      concurrency: 1,
      onHandlerError: (job, error) => errors.push(`${job.runId}: ${String(error)}`),
    });
    queue.start(async () => {
      throw new Error('broken');
    });
    await queue.enqueue({ runId: 'r1', fairnessKey: 'k' });
    await queue.shutdown({ timeoutMs: 1_000 });
    expect(errors).toEqual(['r1: Error: broken']);
  });
});
