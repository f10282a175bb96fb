import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, createTestDatabase, testRedisPrefix } from '../__fixtures__/services.js';
import { startServer } from '../start-server.js';
import { BullRunQueue, openRedis } from './bull-run-queue.js';
import { describeRunQueueContract } from './run-queue-contract.js';
import { probeTestServices } from '../__fixtures__/services.js';

const services = await probeTestServices();

describe.runIf(services.redis && services.postgres)('with Redis and PostgreSQL servers', () => {
  const prefixes: string[] = [];

  function makeQueue(options: { concurrency: number; prefix?: string }): BullRunQueue {
    const prefix = options.prefix ?? testRedisPrefix();
    prefixes.push(prefix);
    return new BullRunQueue({
      url: TEST_REDIS_URL,
      prefix,
      concurrency: options.concurrency,
      lockDurationMs: 5_000,
      maxStalledCount: 3,
    });
  }

  afterAll(async () => {
    const redis = openRedis(TEST_REDIS_URL);
    for (const prefix of prefixes) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
    }
    await redis.quit();
  });

  describeRunQueueContract('BullMQ', async ({ concurrency }) => makeQueue({ concurrency }));

  describe('BullRunQueue', () => {
    it('hands jobs of one queue to two workers, and one worker sees what the other left', async () => {
      const prefix = testRedisPrefix();
      const producer = makeQueue({ concurrency: 1, prefix });
      const first = makeQueue({ concurrency: 1, prefix });
      const second = makeQueue({ concurrency: 1, prefix });
      const byWorker: Record<string, string[]> = { first: [], second: [] };
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const work = (name: string) => async (job: { runId: string }) => {
        byWorker[name]!.push(job.runId);
        await held;
      };
      first.start(work('first'));
      second.start(work('second'));
      await producer.enqueue({ runId: 'a', fairnessKey: 'k' });
      await producer.enqueue({ runId: 'b', fairnessKey: 'k' });
      for (let attempt = 0; attempt < 400; attempt++) {
        if (byWorker.first!.length + byWorker.second!.length === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(byWorker.first).toHaveLength(1);
      expect(byWorker.second).toHaveLength(1);
      expect([...byWorker.first!, ...byWorker.second!].sort()).toEqual(['a', 'b']);
      expect((await producer.stats()).active).toBe(2);
      release();
      await Promise.all(
        [first, second, producer].map((queue) => queue.shutdown({ timeoutMs: 1_000 })),
      );
    });

    it('says it is not ready when Redis does not answer', async () => {
      const queue = new BullRunQueue({
        url: 'redis://127.0.0.1:1',
        prefix: testRedisPrefix(),
        concurrency: 1,
        lockDurationMs: 5_000,
        maxStalledCount: 1,
      });
      expect(await queue.ready()).toBe(false);
      await queue.shutdown({ timeoutMs: 0 });
    });
  });

  describe('delegate-server with a shared queue', () => {
    it('refuses to start when Redis does not answer, naming the URL without its password', async () => {
      const database = await createTestDatabase();
      const directory = await mkdtemp(join(tmpdir(), 'delegate-queue-down-'));
      const workspace = join(directory, 'workspace');
      await mkdir(workspace);
      try {
        const start = startServer({
          sim: 'echo',
          port: 0,
          dataDir: join(directory, 'data'),
          workspaceRoots: [workspace],
          store: database.url,
          queue: 'redis://:queue-secret-pw@127.0.0.1:1/0',
          token: 'queue-down-token-0123456789',
          logLevel: 'silent',
        });
        await expect(start).rejects.toThrow(
          /Cannot reach the Redis queue at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0/,
        );
        await expect(start).rejects.not.toThrow(/queue-secret-pw/);
      } finally {
        await database.drop();
        await rm(directory, { recursive: true, force: true });
      }
    });
  });
});
