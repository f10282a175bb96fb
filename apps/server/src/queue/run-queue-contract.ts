import { afterEach, describe, expect, it } from 'vitest';
import type { RunJob, RunQueue } from './run-queue.js';

/** Makes a fresh queue with the given concurrency. */
export type RunQueueFactory = (options: { concurrency: number }) => Promise<RunQueue>;

type Gate = { promise: Promise<void>; open: () => void };

function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 2_000; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function job(runId: string, fairnessKey = 'default'): RunJob {
  return { runId, fairnessKey };
}

/**
 * The behaviour every `RunQueue` must have. Each implementation's test file calls this with
 * a factory for its own queue (in-process here; BullMQ in the scale-out).
 */
export function describeRunQueueContract(name: string, factory: RunQueueFactory): void {
  describe(`RunQueue contract: ${name}`, () => {
    const queues: RunQueue[] = [];
    const make = async (concurrency: number) => {
      const queue = await factory({ concurrency });
      queues.push(queue);
      return queue;
    };
    afterEach(async () => {
      for (const queue of queues.splice(0)) await queue.shutdown({ timeoutMs: 0 });
    });

    it('never runs more jobs at once than its concurrency, and runs them all', async () => {
      const queue = await make(2);
      let running = 0;
      let most = 0;
      const done: string[] = [];
      queue.start(async (item) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        done.push(item.runId);
      });
      for (let index = 0; index < 7; index++) await queue.enqueue(job(`r${index}`));
      await until(() => done.length === 7, 'seven jobs');
      expect(most).toBe(2);
      expect(done.sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    });

    it('takes keys in turn and keeps each key in arrival order', async () => {
      const queue = await make(1);
      const order: string[] = [];
      const first = gate();
      queue.start(async (item) => {
        order.push(item.runId);
        if (item.runId === 'a1') await first.promise;
      });
      await queue.enqueue(job('a1', 'A'));
      await until(async () => (await queue.stats()).active === 1, 'a1 to start');
      await queue.enqueue(job('a2', 'A'));
      await queue.enqueue(job('a3', 'A'));
      await queue.enqueue(job('b1', 'B'));
      await queue.enqueue(job('b2', 'B'));
      await queue.enqueue(job('c1', 'C'));
      first.open();
      await until(() => order.length === 6, 'six jobs');
      expect(order).toEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'b2']);
    });

    it('holds one job per run at a time', async () => {
      const queue = await make(4);
      const started: string[] = [];
      const hold = gate();
      queue.start(async (item) => {
        started.push(item.runId);
        await hold.promise;
      });
      await queue.enqueue(job('same'));
      await queue.enqueue(job('same'));
      await until(() => started.length === 1, 'the job');
      await queue.enqueue(job('same'));
      expect((await queue.stats()).queued).toBe(0);
      hold.open();
    });

    it('removes a waiting job so it never runs', async () => {
      const queue = await make(1);
      const started: string[] = [];
      const hold = gate();
      queue.start(async (item) => {
        started.push(item.runId);
        if (item.runId === 'first') await hold.promise;
      });
      await queue.enqueue(job('first'));
      await queue.enqueue(job('second'));
      await queue.enqueue(job('third'));
      expect(await queue.remove('second')).toBe(true);
      expect(await queue.remove('second')).toBe(false);
      hold.open();
      await until(() => started.length === 2, 'two jobs');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(started).toEqual(['first', 'third']);
    });

    it('keeps going after a handler throws', async () => {
      const queue = await make(1);
      const done: string[] = [];
      queue.start(async (item) => {
        if (item.runId === 'bad') throw new Error('handler failed');
        done.push(item.runId);
      });
      await queue.enqueue(job('bad'));
      await queue.enqueue(job('good'));
      await until(() => done.length === 1, 'the good job');
      expect(done).toEqual(['good']);
    });

    it('on shutdown lets short jobs finish, aborts long ones, and refuses new jobs', async () => {
      const queue = await make(3);
      const hold = gate();
      // The short job ends once the shutdown has begun: ended before, it would free its slot
      // for 'waiting-2' and not count as finished by the shutdown (a loaded machine did that).
      const shuttingDown = gate();
      const abortedWith: unknown[] = [];
      queue.start(async (item, signal) => {
        if (item.runId === 'quick') {
          await shuttingDown.promise;
          await new Promise((resolve) => setTimeout(resolve, 10));
          return;
        }
        await new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            abortedWith.push(signal.reason);
            resolve();
          });
          void hold.promise.then(resolve);
        });
      });
      await queue.enqueue(job('quick'));
      await queue.enqueue(job('slow'));
      await queue.enqueue(job('waiting-1'));
      await queue.enqueue(job('waiting-2'));
      await until(async () => (await queue.stats()).active === 3, 'three active jobs');
      const stopping = queue.shutdown({ timeoutMs: 300 });
      shuttingDown.open();
      const result = await stopping;
      expect(result.finished).toEqual(['quick']);
      expect(result.aborted.sort()).toEqual(['slow', 'waiting-1']);
      if (queue.shared) {
        // A shared queue leaves jobs it never started in the queue, for the other workers.
        expect(result.notStarted).toEqual([]);
      } else {
        expect(result.notStarted).toEqual(['waiting-2']);
      }
      expect(abortedWith).toHaveLength(2);
      expect(String(abortedWith[0])).toMatch(/shut down/);
      await expect(queue.enqueue(job('late'))).rejects.toThrow(/shutting down/);
      expect(await queue.ready()).toBe(false);
      hold.open();
    });
  });
}
