import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { type Policy, type Sim, startSim } from '@delegate/api-sim';
import { openRedis } from '../queue/bull-run-queue.js';
import { type DelegateServer, startServer } from '../start-server.js';
import { TEST_REDIS_URL, createTestDatabase, testRedisPrefix } from './services.js';
import { TEST_API_KEY, TEST_TOKEN } from './test-server.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const bin = fileURLToPath(new URL('../bin.ts', import.meta.url));

/** The password in the cluster's store URL (the server ignores it; it must never be printed). */
export const CLUSTER_DB_PASSWORD = 'cluster-db-password-0451';

/** A `delegate-server --worker` child process. */
export type WorkerProcess = {
  child: ChildProcess;
  stderr: () => string;
  /** Everything it printed (JSON log lines on stdout, notices on stderr). */
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** An API node in this process. */
export type ApiNode = {
  server: DelegateServer;
  /** Its JSON log lines. */
  logs: () => string;
  api: (path: string, init?: RequestInit & { json?: unknown }) => Promise<Response>;
};

/** One Postgres database, one Redis prefix, one simulator, API nodes here and worker processes. */
export type Cluster = {
  sim: Sim;
  storeUrl: string;
  prefix: string;
  workspace: string;
  startWorker: (options?: { concurrency?: number; extraArgs?: string[] }) => Promise<WorkerProcess>;
  /**
   * Starts a node in this process: API only by default, or API and worker (`role: 'all'`);
   * `storeUrl` / `queueUrl` reach the cluster's PostgreSQL / Redis some other way (a proxy).
   */
  startApiNode: (options?: {
    role?: 'api' | 'all';
    storeUrl?: string;
    queueUrl?: string;
  }) => Promise<ApiNode>;
  close: () => Promise<void>;
};

/** Sets up a cluster; `failoverAfterMs` is the workers' lock time. */
export async function startCluster(options: {
  policy: Policy;
  failoverAfterMs?: number;
  pacing?: { timeToFirstTokenMs?: number; msPerToken?: number };
}): Promise<Cluster> {
  const directory = await realpath(await mkdtemp(join(tmpdir(), 'delegate-cluster-')));
  const workspace = join(directory, 'workspace');
  const home = join(directory, 'home');
  await mkdir(workspace, { recursive: true });
  await mkdir(home, { recursive: true });
  const created = await createTestDatabase();
  // Loopback trust ignores the password; the tests check that no process ever prints it.
  const storeUrl = new URL(created.url);
  storeUrl.password = CLUSTER_DB_PASSWORD;
  const database = { url: storeUrl.toString(), drop: created.drop };
  const prefix = testRedisPrefix();
  const sim = await startSim({
    policy: options.policy,
    ...(options.pacing ? { pacing: options.pacing } : {}),
  });
  const workers: WorkerProcess[] = [];
  const nodes: DelegateServer[] = [];
  let count = 0;
  const common = (name: string) => ({
    dataDir: join(directory, name),
    workspaceRoots: [workspace],
    store: database.url,
    queue: TEST_REDIS_URL,
    queuePrefix: prefix,
    failoverAfterMs: options.failoverAfterMs ?? 2_000,
    homeDir: home,
  });

  const startWorker: Cluster['startWorker'] = async (workerOptions = {}) => {
    count += 1;
    const config = common(`worker-${count}`);
    const args = [
      '--worker',
      '--data-dir',
      config.dataDir,
      '--workspace-root',
      workspace,
      '--store',
      config.store,
      '--queue',
      config.queue,
      '--queue-prefix',
      prefix,
      '--failover-after-ms',
      String(config.failoverAfterMs),
      '--max-concurrent-runs',
      String(workerOptions.concurrency ?? 1),
      '--log-level',
      'info',
      ...(workerOptions.extraArgs ?? []),
    ];
    const child = spawn(process.execPath, ['--import', 'tsx', bin, ...args], {
      cwd: root,
      env: {
        ...process.env,
        TSX_TSCONFIG_PATH: `${root}tsconfig.source.json`,
        ANTHROPIC_API_KEY: TEST_API_KEY,
        ANTHROPIC_BASE_URL: sim.url,
        DELEGATE_SERVER_TOKEN: TEST_TOKEN,
        HOME: home,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let out = '';
    child.stdout!.on('data', (chunk) => (out += String(chunk)));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker did not start:\n${err}`)), 60_000);
      child.stderr!.on('data', (chunk) => {
        err += String(chunk);
        if (err.includes('worker taking runs')) {
          clearTimeout(timer);
          resolve();
        }
      });
      void exit.then(({ code }) => {
        clearTimeout(timer);
        reject(new Error(`worker exited with ${code} before starting:\n${err}`));
      });
    });
    const worker = { child, stderr: () => err, output: () => `${out}${err}`, exit };
    workers.push(worker);
    return worker;
  };

  const startApiNode: Cluster['startApiNode'] = async (nodeOptions = {}) => {
    count += 1;
    let logged = '';
    const logs = new Writable({
      write: (chunk, _encoding, callback) => {
        logged += String(chunk);
        callback();
      },
    });
    const server = await startServer(
      {
        ...common(`api-${count}`),
        ...(nodeOptions.storeUrl ? { store: nodeOptions.storeUrl } : {}),
        ...(nodeOptions.queueUrl ? { queue: nodeOptions.queueUrl } : {}),
        role: nodeOptions.role ?? 'api',
        port: 0,
        apiKey: TEST_API_KEY,
        baseURL: sim.url,
        token: TEST_TOKEN,
        logLevel: 'info',
        rateLimitPerMinute: 100_000,
        authFailuresPerMinute: 100_000,
      },
      { logDestination: logs as never },
    );
    nodes.push(server);
    const api = (path: string, init: RequestInit & { json?: unknown } = {}) => {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${TEST_TOKEN}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${server.url}${path}`, {
        ...rest,
        headers,
        ...(json !== undefined ? { body: JSON.stringify(json), method: rest.method ?? 'POST' } : {}),
      });
    };
    return { server, api, logs: () => logged };
  };

  return {
    sim,
    storeUrl: database.url,
    prefix,
    workspace,
    startWorker,
    startApiNode,
    close: async () => {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exit));
      await Promise.all(nodes.map((node) => node.close({ timeoutMs: 1_000 })));
      await sim.close();
      const redis = openRedis(TEST_REDIS_URL);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      await database.drop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
