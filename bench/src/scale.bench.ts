import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Policy, type Sim, startSim } from '@delegate/api-sim';
import { type BenchResult, checkTarget } from './harness.js';

// Issue 11: delegate-server workers on one PostgreSQL store and one BullMQ queue.
// 1, 2 and 3 worker processes (each at --max-concurrent-runs CONCURRENCY) take the same
// batch of runs (3 model turns each, 100 ms to first token): runs per second and the
// scaling ratio 3 ÷ 1. Then a worker is SIGKILLed holding runs: time until another worker
// takes them over and until their next request, and requests re-sent after failover.
// Needs PostgreSQL (postgres@127.0.0.1:5432, trust) and Redis (127.0.0.1:6379), as in
// apps/server/ci-services.sh; without them it reports why and measures nothing.

const TOKEN = 'bench-token-0123456789abcdef';
const API_KEY = 'bench-api-key-0123456789';
const PG = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CONCURRENCY = Number(process.env.BENCH_SCALE_CONCURRENCY ?? 2);
const FAILOVER_AFTER_MS = 2_000;
/** Runs per worker in the failover scenario, so the killed worker holds several. */
const FAILOVER_CONCURRENCY = 8;
const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'apps/server/src/bin.ts');

type Node = { child: ChildProcess; url: string; exit: Promise<void> };

function percentile(sorted: readonly number[], share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

function psql(database: string, command: string): void {
  const url = new URL(PG);
  url.pathname = `/${database}`;
  execFileSync('psql', [url.toString(), '-q', '-c', command], { stdio: 'ignore' });
}

function redisClean(prefix: string): void {
  const host = new URL(REDIS);
  const args = ['-h', host.hostname, '-p', host.port || '6379'];
  const keys = execFileSync('redis-cli', [...args, '--scan', '--pattern', `${prefix}:*`], {
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  for (let start = 0; start < keys.length; start += 500)
    execFileSync('redis-cli', [...args, 'del', ...keys.slice(start, start + 500)], {
      stdio: 'ignore',
    });
}

/** Why the bench cannot run here, or undefined when PostgreSQL and Redis answer. */
function servicesMissing(): string | undefined {
  try {
    psql('postgres', 'select 1');
  } catch (error) {
    return `PostgreSQL at ${new URL(PG).host} did not answer (${(error as Error).message.split('\n')[0]})`;
  }
  try {
    const host = new URL(REDIS);
    const answer = execFileSync(
      'redis-cli',
      ['-h', host.hostname, '-p', host.port || '6379', 'ping'],
      {
        encoding: 'utf8',
      },
    );
    if (!answer.includes('PONG')) return `Redis answered ${answer.trim()}`;
  } catch (error) {
    return `Redis at ${new URL(REDIS).host} did not answer (${(error as Error).message.split('\n')[0]})`;
  }
  return undefined;
}

/** A database and a key prefix of their own for one phase. */
function deployment(): { store: string; prefix: string; drop: () => void } {
  const name = `delegate_bench_${randomBytes(5).toString('hex')}`;
  psql('postgres', `create database ${name}`);
  const url = new URL(PG);
  url.pathname = `/${name}`;
  const prefix = `delegate-bench-${randomBytes(5).toString('hex')}`;
  return {
    store: url.toString(),
    prefix,
    drop: () => {
      psql('postgres', `drop database if exists ${name} with (force)`);
      redisClean(prefix);
    },
  };
}

async function startNode(options: {
  role: 'worker' | 'api';
  store: string;
  prefix: string;
  dataDir: string;
  workspace: string;
  sim: Sim;
  concurrency: number;
}): Promise<Node> {
  const args = [
    '--import',
    'tsx',
    bin,
    options.role === 'worker' ? '--worker' : '--api-only',
    '--store',
    options.store,
    '--queue',
    REDIS,
    '--queue-prefix',
    options.prefix,
    '--data-dir',
    options.dataDir,
    '--workspace-root',
    options.workspace,
    '--max-concurrent-runs',
    String(options.concurrency),
    '--failover-after-ms',
    String(FAILOVER_AFTER_MS),
    '--rate-limit',
    '10000000',
    '--log-level',
    'warn',
    ...(options.role === 'api' ? ['--port', '0'] : []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: options.workspace,
      TSX_TSCONFIG_PATH: join(root, 'tsconfig.source.json'),
      ANTHROPIC_API_KEY: API_KEY,
      ANTHROPIC_BASE_URL: options.sim.url,
      DELEGATE_SERVER_TOKEN: TOKEN,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
      const match = /listening on (http:\/\/\S+) /.exec(stderr);
      if (match) resolve(match[1]!);
      if (stderr.includes('worker taking runs')) resolve('');
    });
    void exit.then(() => reject(new Error(`delegate-server exited: ${stderr.slice(-2000)}`)));
  });
  return { child, url, exit };
}

async function api(url: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function metric(url: string, sample: string): Promise<number> {
  const text = await (await api(url, '/metrics')).text();
  const line = text.split('\n').find((item) => item.startsWith(`${sample} `));
  return line === undefined ? 0 : Number(line.slice(sample.length + 1));
}

/** Three model turns per run: two tool calls, then the answer. */
const threeTurns: Policy = (request) => {
  if (request.turnIndex < 2) return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
  return 'Done.';
};

/** Requests sent again although an identical one had been answered in full. */
function resentFinished(sim: Sim): number {
  const finished = new Set<string>();
  let resent = 0;
  for (const entry of sim.journal.entries) {
    const body = entry.body as { system?: unknown; messages?: unknown };
    const key = JSON.stringify([body.system, body.messages]);
    if (finished.has(key)) resent += 1;
    if (entry.status === 200 && entry.error === undefined) finished.add(key);
  }
  return resent;
}

async function stopAll(nodes: readonly Node[]): Promise<void> {
  for (const node of nodes) if (node.child.exitCode === null) node.child.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const node of nodes) if (node.child.exitCode === null) node.child.kill('SIGKILL');
  }, 15_000);
  await Promise.all(nodes.map((node) => node.exit));
  clearTimeout(timer);
}

type Cluster = {
  sim: Sim;
  api: Node;
  workers: Node[];
  workspace: string;
  close: () => Promise<void>;
};

async function cluster(options: {
  workers: number;
  policy: Policy;
  timeToFirstTokenMs: number;
  concurrency: number;
}): Promise<Cluster> {
  const directory = await mkdtemp(join(tmpdir(), 'delegate-scale-bench-'));
  const workspace = join(directory, 'workspace');
  await mkdir(workspace, { recursive: true });
  const place = deployment();
  const sim = await startSim({
    policy: options.policy,
    pacing: { timeToFirstTokenMs: options.timeToFirstTokenMs, msPerToken: 0 },
  });
  const common = {
    store: place.store,
    prefix: place.prefix,
    workspace,
    sim,
    concurrency: options.concurrency,
  };
  const nodes: Node[] = [];
  try {
    const apiNode = await startNode({ ...common, role: 'api', dataDir: join(directory, 'api') });
    nodes.push(apiNode);
    const workers = await Promise.all(
      Array.from({ length: options.workers }, (_, index) =>
        startNode({ ...common, role: 'worker', dataDir: join(directory, `worker-${index}`) }),
      ),
    );
    nodes.push(...workers);
    return {
      sim,
      api: apiNode,
      workers,
      workspace,
      close: async () => {
        await stopAll(nodes);
        await sim.close();
        place.drop();
        await rm(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopAll(nodes);
    await sim.close();
    place.drop();
    throw error;
  }
}

async function createRuns(url: string, count: number, workspace: string): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const response = await api(url, '/v1/runs', { prompt: `bench run ${index}`, workspace });
    ids.push(((await response.json()) as { id: string }).id);
  }
  return ids;
}

async function waitCompleted(url: string, count: number): Promise<void> {
  // A hang guard, not a figure: 10 minutes.
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    const done =
      (await metric(url, 'delegate_runs{status="completed"}')) +
      (await metric(url, 'delegate_runs{status="failed"}'));
    if (done >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`runs did not finish within 10 minutes`);
}

async function throughput(workers: number, runs: number) {
  const setup = await cluster({
    workers,
    policy: threeTurns,
    timeToFirstTokenMs: 100,
    concurrency: CONCURRENCY,
  });
  try {
    const started = performance.now();
    await createRuns(setup.api.url, runs, setup.workspace);
    await waitCompleted(setup.api.url, runs);
    const seconds = (performance.now() - started) / 1_000;
    return {
      runsPerSecond: runs / seconds,
      seconds,
      failed: await metric(setup.api.url, 'delegate_runs{status="failed"}'),
      requests: setup.sim.journal.entries.length,
      resent: resentFinished(setup.sim),
    };
  } finally {
    await setup.close();
  }
}

export default async function scaleBench(
  options: { quick?: boolean } = {},
): Promise<BenchResult[]> {
  const quick = options.quick === true || process.env.BENCH_QUICK === '1';
  const missing = servicesMissing();
  if (missing) {
    return [
      {
        name: 'server scale-out: skipped',
        metrics: {},
        notes: { reason: `${missing}; start them with apps/server/ci-services.sh` },
      },
    ];
  }
  const runs = quick ? 6 : 300;
  const results: BenchResult[] = [];
  const byWorkers: Record<number, Awaited<ReturnType<typeof throughput>>> = {};
  for (const workers of [1, 2, 3]) byWorkers[workers] = await throughput(workers, runs);
  const metrics = {
    runsPerSecond1Worker: byWorkers[1]!.runsPerSecond,
    runsPerSecond2Workers: byWorkers[2]!.runsPerSecond,
    runsPerSecond3Workers: byWorkers[3]!.runsPerSecond,
    scalingRatio3To1: byWorkers[3]!.runsPerSecond / byWorkers[1]!.runsPerSecond,
    scalingRatio2To1: byWorkers[2]!.runsPerSecond / byWorkers[1]!.runsPerSecond,
    failedRuns: byWorkers[1]!.failed + byWorkers[2]!.failed + byWorkers[3]!.failed,
    resentFinishedRequests: byWorkers[1]!.resent + byWorkers[2]!.resent + byWorkers[3]!.resent,
  };
  results.push({
    name: `server scale-out: ${runs} runs × 3 turns, 100 ms to first token, 1 / 2 / 3 workers`,
    metrics,
    conditions: `${runs} runs of 3 model turns (100 ms to first token) through one API node to 1, 2 and 3 worker processes at --max-concurrent-runs ${CONCURRENCY}, one PostgreSQL and one Redis, api-sim and the load generator in the bench process`,
    // Reported, never enforced: a figure never fails the bench.
    targets: [
      checkTarget(metrics, 'scalingRatio3To1', '>=', 2.4),
      checkTarget(metrics, 'resentFinishedRequests', '<=', 0),
    ],
    notes: { concurrencyPerWorker: CONCURRENCY },
  });
  results.push(await failover(quick ? 4 : 24));
  return results;
}

/** SIGKILLs a worker holding runs; measures until another takes them over and sends their next request. */
async function failover(runs: number): Promise<BenchResult> {
  // One second to first token: the runs are in the middle of a turn when the worker dies.
  let arrivals = 0;
  const counting: Policy = (request) => {
    arrivals += 1;
    return threeTurns(request);
  };
  const setup = await cluster({
    workers: 2,
    policy: counting,
    timeToFirstTokenMs: 1_000,
    concurrency: FAILOVER_CONCURRENCY,
  });
  try {
    const ids = await createRuns(setup.api.url, runs, setup.workspace);
    // Both workers hold runs once every slot is busy; two requests per busy run means each
    // has a finished turn and one in flight.
    const busy = Math.min(runs, FAILOVER_CONCURRENCY * 2);
    const deadline = Date.now() + 120_000;
    while (arrivals < busy * 2) {
      if (Date.now() > deadline) throw new Error('the workers did not take the runs');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const killedAt = Date.now();
    setup.workers[0]!.child.kill('SIGKILL');
    await waitCompleted(setup.api.url, runs);
    const takeover: number[] = [];
    const nextRequest: number[] = [];
    for (const [index, id] of ids.entries()) {
      const response = await api(setup.api.url, `/v1/runs/${id}/events?after=0`);
      const text = await response.text();
      const line = text
        .split('\n')
        .find((item) => item.startsWith('data:') && item.includes('"type":"run.failover"'));
      if (!line) continue;
      const event = JSON.parse(line.slice(5)) as { time: string };
      const at = Date.parse(event.time);
      takeover.push(at - killedAt);
      const marker = `bench run ${index}"`;
      const next = setup.sim.journal.entries.find(
        (entry) => entry.time >= at && JSON.stringify(entry.body).includes(marker),
      );
      if (next) nextRequest.push(next.time - killedAt);
    }
    takeover.sort((a, b) => a - b);
    nextRequest.sort((a, b) => a - b);
    const metrics = {
      runsTakenOver: takeover.length,
      killToTakeoverP50Ms: percentile(takeover, 0.5),
      killToTakeoverP99Ms: percentile(takeover, 0.99),
      killToNextRequestP50Ms: percentile(nextRequest, 0.5),
      killToNextRequestP99Ms: percentile(nextRequest, 0.99),
      failedRuns: await metric(setup.api.url, 'delegate_runs{status="failed"}'),
      resentFinishedRequests: resentFinished(setup.sim),
    };
    return {
      name: `server scale-out: SIGKILL of one of two workers holding runs (${runs} runs, failover after ${FAILOVER_AFTER_MS} ms)`,
      metrics,
      conditions: `${runs} runs of 3 turns (1 s to first token) on two workers at --max-concurrent-runs ${FAILOVER_CONCURRENCY}, --failover-after-ms ${FAILOVER_AFTER_MS}; one worker is SIGKILLed once every busy run has a finished turn and one in flight; times from the kill to the run.failover event and to the run's next request`,
      targets: [checkTarget(metrics, 'resentFinishedRequests', '<=', 0)],
      notes: {
        lock: 'BullMQ lock time = --failover-after-ms; the stalled check runs every half of it',
      },
    };
  } finally {
    await setup.close();
  }
}
