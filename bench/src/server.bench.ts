import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rules, startSim } from '@delegate/api-sim';
import type { BenchResult } from './harness.js';

// `pnpm bench --quick` runs every scenario at a tiny size (CI checks that it runs, not its figures).
const QUICK = process.argv.includes('--quick');
const RUNS = QUICK ? 4 : Number(process.env.BENCH_SERVER_RUNS ?? 200);
const SUBSCRIBERS = QUICK ? 2 : 20;
const PACING_MS = 100;
const TOKEN = 'bench-token-0123456789abcdef';
const root = fileURLToPath(new URL('../../', import.meta.url));

type Received = { seq: number; latencyMs: number | undefined };

function rssBytes(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    throw new Error(`the server process ${pid} is gone`);
  }
  const kilobytes = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  return kilobytes * 1024;
}

/** Waits (idle) until RSS is back within 20% of `baseline`, at most 60 s (quick: 3 s); returns it and the wait. */
async function settledRss(
  pid: number,
  baseline: number,
): Promise<{ rss: number; seconds: number }> {
  let rss = rssBytes(pid);
  let seconds = 0;
  while (rss > baseline * 1.2 && seconds < (QUICK ? 3 : 60)) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    seconds += 1;
    rss = rssBytes(pid);
  }
  return { rss, seconds };
}

function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

async function startServer(options: { dataDir: string; workspace: string; simUrl: string }) {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'apps/server/src/bin.ts'),
      '--port',
      '0',
      '--data-dir',
      options.dataDir,
      '--workspace-root',
      options.workspace,
      '--max-concurrent-runs',
      String(RUNS),
      '--rate-limit',
      '10000000',
      '--log-level',
      'warn',
    ],
    {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: options.workspace,
        TSX_TSCONFIG_PATH: join(root, 'tsconfig.source.json'),
        ANTHROPIC_API_KEY: 'bench-api-key-0123456789',
        ANTHROPIC_BASE_URL: options.simUrl,
        DELEGATE_SERVER_TOKEN: TOKEN,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: false,
    },
  );
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk) => {
      stderr += String(chunk);
      const match = /listening on (http:\/\/\S+) /.exec(stderr);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  child.once('exit', (code, signal) => {
    if (code !== 0)
      process.stderr.write(`server exited (${code ?? signal}):\n${stderr.slice(-4000)}\n`);
  });
  return { child, url };
}

/** What the bench reads from the API's JSON answers. */
type Answer = { id: string; status: string };

function call(
  url: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Answer }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const outgoing = request(
      `${url}${path}`,
      {
        method: body === undefined ? 'GET' : 'POST',
        // A fresh connection per call: reusing a keep-alive socket the server is closing resets it.
        agent: false,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(text
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }
            : {}),
        },
      },
      (response) => {
        let data = '';
        response.on('data', (chunk) => (data += String(chunk)));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            json: (data ? JSON.parse(data) : {}) as Answer,
          }),
        );
      },
    );
    outgoing.on('error', (error) => reject(new Error(`${path}: ${error.message}`)));
    outgoing.end(text);
  });
}

/** A subscription: `opened` once the stream's headers arrive, `done` with what it received. */
type Subscription = { opened: Promise<void>; done: Promise<Received[]> };

/** Follows a run's events to their end; latency only for events emitted after the stream opened. */
function subscribe(url: string, runId: string): Subscription {
  let markOpened!: () => void;
  const opened = new Promise<void>((resolve) => (markOpened = resolve));
  const done = new Promise<Received[]>((resolve, reject) => {
    const received: Received[] = [];
    const outgoing = request(
      `${url}/v1/runs/${runId}/events`,
      { headers: { authorization: `Bearer ${TOKEN}` }, agent: false },
      (response: IncomingMessage) => {
        const openedAt = Date.now();
        markOpened();
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const now = Date.now();
          buffer += chunk;
          let boundary = buffer.indexOf('\n\n');
          while (boundary !== -1) {
            const block = buffer.slice(0, boundary);
            buffer = buffer.slice(boundary + 2);
            boundary = buffer.indexOf('\n\n');
            const data = block.split('\n').find((line) => line.startsWith('data:'));
            if (!data) continue;
            const event = JSON.parse(data.slice(5)) as { seq: number; time: string };
            const emitted = Date.parse(event.time);
            received.push({
              seq: event.seq,
              latencyMs: emitted >= openedAt ? now - emitted : undefined,
            });
          }
        });
        response.on('end', () => resolve(received));
        response.on('error', (error) =>
          reject(new Error(`events of ${runId} (after ${received.length}): ${error.message}`)),
        );
      },
    );
    outgoing.on('error', (error) =>
      reject(new Error(`events of ${runId} (connect): ${error.message}`)),
    );
    outgoing.end();
  });
  return { opened, done };
}

type RoundResult = {
  latencies: number[];
  lost: number;
  duplicated: number;
  delivered: number;
  completed: number;
  wallMs: number;
  peak: number;
};

/** One load round: create the runs, attach the subscribers, let the runs go, check every stream. */
async function round(options: {
  url: string;
  pid: number;
  hold: () => void;
  go: () => void;
}): Promise<RoundResult> {
  const { url, pid } = options;
  let peak = rssBytes(pid);
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      clearInterval(sampler);
    }
  }, 100);
  options.hold();
  const started = Date.now();
  const runs = await Promise.all(
    Array.from({ length: RUNS }, async (_, index) => {
      const created = await call(url, '/v1/runs', { prompt: `Audit part ${index}` });
      if (created.status !== 201) throw new Error(`POST /v1/runs answered ${created.status}`);
      const id = created.json.id;
      return { id, subscriptions: Array.from({ length: SUBSCRIBERS }, () => subscribe(url, id)) };
    }),
  );
  await Promise.all(
    runs.flatMap((run) => run.subscriptions.map((subscription) => subscription.opened)),
  );
  options.go();
  const streams = await Promise.all(
    runs.map(async (run) => ({
      id: run.id,
      streams: await Promise.all(run.subscriptions.map((subscription) => subscription.done)),
    })),
  );
  const wallMs = Date.now() - started;
  clearInterval(sampler);
  const result: RoundResult = {
    latencies: [],
    lost: 0,
    duplicated: 0,
    delivered: 0,
    completed: 0,
    wallMs,
    peak,
  };
  for (const run of streams) {
    const reference = await subscribe(url, run.id).done;
    const detail = await call(url, `/v1/runs/${run.id}`);
    if (detail.json.status === 'completed') result.completed++;
    const expected = reference.length;
    for (const stream of run.streams) {
      const seen = new Set(stream.map((event) => event.seq));
      result.lost += expected - [...seen].filter((seq) => seq >= 1 && seq <= expected).length;
      result.duplicated += stream.length - seen.size;
      result.delivered += stream.length;
      for (const event of stream)
        if (event.latencyMs !== undefined) result.latencies.push(event.latencyMs);
    }
  }
  result.latencies.sort((a, b) => a - b);
  return result;
}

/**
 * 200 concurrent runs through the HTTP API against api-sim (100 ms to first token), each
 * followed by 20 SSE subscribers: emit-to-subscriber latency, events lost, and the server's
 * RSS during and after the load against its idle baseline, all measured in one run.
 */
export default async function serverBench(): Promise<BenchResult[]> {
  const isMain = (item: { agent?: string }) => item.agent === undefined;
  // The main agents' first requests wait until every subscriber is connected, so the
  // latency figures are of live delivery, not of replay.
  let go: () => void = () => undefined;
  let started = Promise.resolve();
  const hold = () => {
    started = new Promise<void>((resolve) => (go = resolve));
  };
  const sim = await startSim({
    pacing: { timeToFirstTokenMs: PACING_MS, msPerToken: 1 },
    policy: rules([
      {
        match: { when: isMain, lastUserText: '<task-notification>' },
        reply: 'All reports are in.',
      },
      {
        match: { when: isMain, toolResult: false },
        reply: async () => {
          await started;
          return [
            {
              type: 'tool_use',
              name: 'Agent',
              input: {
                description: 'look',
                prompt: 'Look around.',
                subagent_type: 'general-purpose',
              },
            },
            {
              type: 'tool_use',
              name: 'Agent',
              input: {
                description: 'survey',
                prompt: 'Survey.',
                subagent_type: 'general-purpose',
                run_in_background: true,
              },
            },
          ] as const;
        },
      },
      { match: { when: isMain, toolResult: 'Agent' }, reply: 'Waiting for the survey.' },
      { match: { agent: 'general-purpose' }, reply: 'Nothing unusual here.' },
    ]),
  });
  const base = await mkdtemp(join(tmpdir(), 'delegate-server-bench-'));
  const workspace = join(base, 'workspace');
  await mkdir(workspace);
  let child: ChildProcess | undefined;
  try {
    const server = await startServer({ dataDir: join(base, 'data'), workspace, simUrl: sim.url });
    child = server.child;
    const pid = child.pid!;
    // Warm up with one run, then take the idle baseline.
    const warm = await call(server.url, '/v1/runs', { prompt: 'warm up' });
    await subscribe(server.url, warm.json.id).done;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const baseline = rssBytes(pid);
    const controls = { url: server.url, pid, hold, go: () => go() };
    const first = await round(controls);
    const afterFirst = await settledRss(pid, baseline);
    const second = await round(controls);
    const afterSecond = await settledRss(pid, baseline);
    const latencies = [...first.latencies, ...second.latencies].sort((a, b) => a - b);
    const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
    return [
      {
        name: `server: ${RUNS} concurrent runs × ${SUBSCRIBERS} SSE subscribers on api-sim (${PACING_MS} ms pacing), two rounds`,
        metrics: {
          latencyP50Ms: percentile(latencies, 0.5),
          latencyP99Ms: percentile(latencies, 0.99),
          eventsLost: first.lost + second.lost,
          eventsDuplicated: first.duplicated + second.duplicated,
          eventsDelivered: first.delivered + second.delivered,
          runsCompleted: first.completed + second.completed,
          roundWallMs: second.wallMs,
          rssBaselineMB: mb(baseline),
          rssPeakMB: mb(Math.max(first.peak, second.peak)),
          rssAfterFirstRoundMB: mb(afterFirst.rss),
          rssAfterSecondRoundMB: mb(afterSecond.rss),
          secondsToSettle: afterSecond.seconds,
          rssPeakToBaseline: Math.max(first.peak, second.peak) / baseline,
          rssAfterToBaseline: afterSecond.rss / baseline,
          rssAfterSecondToAfterFirst: afterSecond.rss / afterFirst.rss,
        },
        notes: {
          runs: RUNS,
          rounds: 2,
          subscribersPerRun: SUBSCRIBERS,
          agentsPerRun: 3,
          latencySamples: latencies.length,
          latency:
            "event time (set when the server receives the runtime's event) to arrival at a subscriber, ms clock, both rounds; replayed events excluded",
          rssAfter:
            'measured 3 s after the last run of a round ended (no forced GC); up to 32 idle sessions stay in memory',
          server:
            'child process (tsx from source), --max-concurrent-runs 200, SQLite WAL store, log level warn; 2 shared cores, load generator and api-sim in the bench process',
        },
      },
    ];
  } catch (error) {
    process.stderr.write(
      `server bench failed: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    throw error;
  } finally {
    child?.kill('SIGTERM');
    await new Promise((resolve) =>
      child && child.exitCode === null ? child.once('exit', resolve) : resolve(undefined),
    );
    await sim.close();
    await rm(base, { recursive: true, force: true });
  }
}
