import { chmod, mkdir, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { type AddressInfo, type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { type ApiRun, json } from './__fixtures__/api-types.js';
import { startCluster } from './__fixtures__/cluster.js';
import { Gates, scenarioPolicy } from './__fixtures__/scenario-policy.js';
import { TEST_REDIS_URL, probeTestServices } from './__fixtures__/services.js';
import {
  TEST_API_KEY,
  TEST_TOKEN,
  startTestServer,
  waitForRun,
} from './__fixtures__/test-server.js';
import { openRedis } from './queue/bull-run-queue.js';
import { startServer } from './start-server.js';
import { openSqliteRunStore } from './store/sqlite-run-store.js';

const services = await probeTestServices();
const ENDED = ['completed', 'failed', 'cancelled', 'interrupted'];
const ended = (run: ApiRun) => ENDED.includes(run.status);
const quiet = () => new Writable({ write: (_chunk, _encoding, callback) => callback() });

/** A TCP listener on a free loopback port, holding it. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve));
  return { port: (server.address() as AddressInfo).port, server };
}

async function closePort(server: Server): Promise<void> {
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** How many BullMQ workers Redis lists for `queue`, once it lists one (a hang guard). */
async function connectedWorkers(queue: Queue): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const workers = await queue.getWorkers();
    if (workers.length > 0) return workers.length;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('timed out waiting for a BullMQ worker to connect');
}

describe('startServer on a port in use', () => {
  it('rejects naming the port, without recovering or taking the runs of the server holding it, and closes the store it opened; a start on a free port works', async () => {
    const gates = new Gates();
    const test = await startTestServer({
      policy: scenarioPolicy(gates),
      config: { maxConcurrentRuns: 1 },
    });
    const other = await realpath(await mkdtemp(join(tmpdir(), 'delegate-second-start-')));
    try {
      const start = async (prompt: string) =>
        (await json<{ id: string }>(await test.api('/v1/runs', { json: { prompt } }))).id;
      const held = await start('scenario:hold');
      await waitForRun(test, held, (run) => run.status === 'running', 'the held run');
      const waiting = await start('scenario:hello');

      // A second instance started by mistake on the first one's database and port.
      const path = join(test.dataDir, 'runs.sqlite');
      const store = openSqliteRunStore({ path });
      let closed = false;
      const closeStore = store.close.bind(store);
      store.close = async () => {
        closed = true;
        await closeStore();
      };
      const config = {
        port: test.server.port,
        dataDir: join(other, 'data'),
        workspaceRoots: [test.workspace],
        apiKey: TEST_API_KEY,
        baseURL: test.sim.url,
        token: TEST_TOKEN,
        homeDir: test.root,
      };
      await expect(
        startServer(config, { store, logDestination: quiet() as never }),
      ).rejects.toThrow(
        new RegExp(
          `Cannot listen on 127\\.0\\.0\\.1:${test.server.port}: .*EADDRINUSE.*Pick another --port`,
        ),
      );
      expect(closed).toBe(true);
      await expect(store.getRun(held)).rejects.toThrow();

      // The first server's runs are as they were: not marked interrupted, not taken.
      expect((await json<ApiRun>(await test.api(`/v1/runs/${held}`))).status).toBe('running');
      expect((await json<ApiRun>(await test.api(`/v1/runs/${waiting}`))).status).toBe('queued');
      gates.open('hold');
      expect(await waitForRun(test, held, ended)).toMatchObject({
        status: 'completed',
        result: 'Released.',
      });
      expect(await waitForRun(test, waiting, ended)).toMatchObject({
        status: 'completed',
        result: 'Hello from the model.',
      });

      const again = await startServer(
        { ...config, port: 0 },
        { store: openSqliteRunStore({ path }), logDestination: quiet() as never },
      );
      try {
        const response = await fetch(`${again.url}/v1/runs/${waiting}`, {
          headers: { authorization: `Bearer ${TEST_TOKEN}` },
        });
        expect((await json<ApiRun>(response)).status).toBe('completed');
      } finally {
        await again.close({ timeoutMs: 1_000 });
      }
    } finally {
      gates.openAll();
      await test.close();
      await rm(other, { recursive: true, force: true });
    }
  });

  describe.runIf(services.postgres && services.redis)('with PostgreSQL and Redis', () => {
    it('a worker whose --health-port is in use rejects naming it, takes no job and leaves no BullMQ worker; one on a free port runs the job and logs each health request', async () => {
      const cluster = await startCluster({ policy: scenarioPolicy(new Gates()) });
      const directory = await realpath(await mkdtemp(join(tmpdir(), 'delegate-worker-start-')));
      const held = await holdPort();
      const redis = openRedis(TEST_REDIS_URL);
      const queue = new Queue('runs', { connection: redis, prefix: cluster.prefix });
      try {
        const node = await cluster.startApiNode();
        const created = await json<{ id: string }>(
          await node.api('/v1/runs', { json: { prompt: 'scenario:hello' } }),
        );
        await mkdir(join(directory, 'home'));
        const config = {
          role: 'worker' as const,
          healthPort: held.port,
          dataDir: join(directory, 'data'),
          workspaceRoots: [cluster.workspace],
          store: cluster.storeUrl,
          queue: TEST_REDIS_URL,
          queuePrefix: cluster.prefix,
          apiKey: TEST_API_KEY,
          baseURL: cluster.sim.url,
          token: TEST_TOKEN,
          homeDir: join(directory, 'home'),
        };
        await expect(startServer(config, { logDestination: quiet() as never })).rejects.toThrow(
          new RegExp(
            `Cannot listen on 127\\.0\\.0\\.1:${held.port}: .*EADDRINUSE.*Pick another --health-port`,
          ),
        );
        expect((await json<ApiRun>(await node.api(`/v1/runs/${created.id}`))).status).toBe(
          'queued',
        );
        expect(await queue.getWorkers()).toHaveLength(0);
        // Its job still waits in line (prioritized: the queue orders runs by fairness).
        expect(await (await queue.getJob(created.id))?.getState()).toBe('prioritized');

        const lines: string[] = [];
        const logs = new Writable({
          write(chunk, _encoding, callback) {
            lines.push(...String(chunk).trim().split('\n'));
            callback();
          },
        });
        const worker = await startServer(
          { ...config, healthPort: 0, logLevel: 'info' },
          { logDestination: logs as never },
        );
        try {
          // The health listener logs one line per request, as the API does.
          const ready = await fetch(`${worker.url}/readyz`);
          expect(ready.status).toBe(200);
          const missing = await fetch(`${worker.url}/v1/runs`);
          expect(missing.status).toBe(404);
          const requests = lines
            .map((line) => JSON.parse(line) as Record<string, unknown>)
            .filter((line) => line.msg === 'request');
          expect(requests).toEqual([
            expect.objectContaining({
              method: 'GET',
              path: '/readyz',
              status: 200,
              requestId: ready.headers.get('x-request-id'),
            }),
            expect.objectContaining({
              method: 'GET',
              path: '/v1/runs',
              status: 404,
              requestId: missing.headers.get('x-request-id'),
            }),
          ]);
          // Once this worker shows in Redis, it is the only one: the failed start left none.
          expect(await connectedWorkers(queue)).toBe(1);
          const test = { api: node.api } as Parameters<typeof waitForRun>[0];
          expect(await waitForRun(test, created.id, ended)).toMatchObject({
            status: 'completed',
            result: 'Hello from the model.',
          });
        } finally {
          await worker.close({ timeoutMs: 1_000 });
        }
      } finally {
        await queue.close();
        await redis.quit();
        await closePort(held.server);
        await cluster.close();
        await rm(directory, { recursive: true, force: true });
      }
    });
  });
});

describe('startServer and its data directory', () => {
  it('makes an existing data directory open to others private, as it creates a new one', async () => {
    const directory = await realpath(await mkdtemp(join(tmpdir(), 'delegate-data-mode-')));
    try {
      const dataDir = join(directory, 'data');
      const workspace = join(directory, 'workspace');
      await mkdir(dataDir, { mode: 0o755 });
      await chmod(dataDir, 0o755);
      await mkdir(workspace);
      const server = await startServer(
        {
          port: 0,
          dataDir,
          workspaceRoots: [workspace],
          sim: 'echo',
          token: TEST_TOKEN,
          homeDir: directory,
        },
        { logDestination: quiet() as never },
      );
      await server.close({ timeoutMs: 1_000 });
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
