import type { Policy } from '@delegate/api-sim';
import { openRedis } from './queue/bull-run-queue.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiNode,
  CLUSTER_DB_PASSWORD,
  type Cluster,
  startCluster,
} from './__fixtures__/cluster.js';
import { Gates } from './__fixtures__/scenario-policy.js';
import { type ApiEvent, type ApiRun, type ApiRunList, json } from './__fixtures__/api-types.js';
import { TEST_REDIS_URL, probeTestServices } from './__fixtures__/services.js';
import { type TcpProxy, startTcpProxy } from './__fixtures__/tcp-proxy.js';
import { readSse } from './__fixtures__/test-server.js';

const services = await probeTestServices();

describe.runIf(services.postgres && services.redis)('a cluster through outages', () => {
  const gates = new Gates();
  // `scenario:NAME` is held until the gate NAME opens; `NAME-arrived` opens when it is held.
  // Except that a scenario's request sent again (a takeover's) answers at once.
  const arrivals = new Map<string, number>();
  const policy: Policy = async (request) => {
    const name = /scenario:([a-z0-9-]+)/.exec(JSON.stringify(request.messages))?.[1];
    if (name === undefined) return 'No scenario.';
    const count = (arrivals.get(name) ?? 0) + 1;
    arrivals.set(name, count);
    gates.open(`${name}-arrived-${count}`);
    // `-hold` scenarios are held on every request, until the end of the test.
    if (count > 1 && !name.endsWith('-hold')) return `Done ${name} after a takeover.`;
    gates.open(`${name}-arrived`);
    await gates.get(name).promise;
    return `Done ${name}.`;
  };
  let cluster: Cluster;
  const proxies: TcpProxy[] = [];

  beforeAll(async () => {
    cluster = await startCluster({ policy, failoverAfterMs: 2_000 });
  });
  afterAll(async () => {
    gates.openAll();
    for (const proxy of proxies) proxy.restore();
    await cluster?.close();
    for (const proxy of proxies) await proxy.close();
  });

  async function proxyTo(url: string, port: number): Promise<TcpProxy> {
    const proxy = await startTcpProxy(url, port);
    proxies.push(proxy);
    return proxy;
  }

  async function until<T>(
    check: () => Promise<T | undefined>,
    what: string,
    timeoutMs = 30_000,
  ): Promise<T> {
    // A hang guard only: the outcome never depends on how long it takes.
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const value = await check().catch(() => undefined);
      if (value !== undefined) return value;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  async function createRun(node: ApiNode, prompt: string): Promise<string> {
    const response = await node.api('/v1/runs', {
      json: { prompt, workspace: cluster.workspace },
    });
    expect(response.status).toBe(201);
    return (await json<{ id: string }>(response)).id;
  }

  async function runOf(node: ApiNode, runId: string): Promise<ApiRun> {
    return json<ApiRun>(await node.api(`/v1/runs/${runId}`));
  }

  async function ended(node: ApiNode, runId: string, timeoutMs?: number): Promise<ApiRun> {
    return until(
      async () => {
        const run = await runOf(node, runId);
        return ['queued', 'running'].includes(run.status) ? undefined : run;
      },
      `run ${runId} to end`,
      timeoutMs,
    );
  }

  async function readiness(node: ApiNode): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${node.server.url}/readyz`);
    return { status: response.status, body: await response.json() };
  }

  /** Follows a run's events; `seen` fills as they arrive, `done` resolves when the stream ends. */
  async function follow(
    node: ApiNode,
    runId: string,
  ): Promise<{ seen: ApiEvent[]; done: Promise<ApiEvent[]> }> {
    const response = await node.api(`/v1/runs/${runId}/events`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(response.status).toBe(200);
    const seen: ApiEvent[] = [];
    const done = readSse(response, {
      stop: (event) => {
        seen.push(event.data);
        return false;
      },
    }).then(() => seen);
    return { seen, done };
  }

  function expectNoGap(events: readonly ApiEvent[]): void {
    expect(events.map((event) => event.seq)).toEqual(events.map((_event, index) => index + 1));
  }

  it("a node cut off from PostgreSQL hears other nodes' events again once it is back: its followers get what was stored meanwhile and end with the run, and /readyz says it is not listening meanwhile", async () => {
    const proxy = await proxyTo(cluster.storeUrl, 5432);
    const holder = await cluster.startApiNode({ role: 'all' });
    const follower = await cluster.startApiNode({ storeUrl: proxy.url });
    try {
      expect(await readiness(follower)).toEqual({
        status: 200,
        body: { status: 'ok', checks: { store: 'ok', queue: 'ok', events: 'ok' } },
      });
      const runId = await createRun(holder, 'scenario:follow-through');
      await gates.get('follow-through-arrived').promise;
      const stream = await follow(follower, runId);
      await until(
        async () => (stream.seen.some((event) => event.type === 'run.input') ? true : undefined),
        'the replay',
      );

      proxy.cut();
      const down = await until(async () => {
        const ready = await readiness(follower);
        return ready.status === 503 ? ready : undefined;
      }, '/readyz to refuse');
      expect(down.body).toEqual({
        status: 'unavailable',
        checks: { store: 'unreachable', queue: 'ok', events: 'not listening' },
      });
      // The run ends on the other node while this one hears nothing.
      gates.open('follow-through');
      expect((await ended(holder, runId)).status).toBe('completed');
      proxy.restore();

      const events = await Promise.race([
        stream.done,
        new Promise<never>((_resolve, reject) =>
          setTimeout(() => reject(new Error('the follower did not end with the run')), 30_000),
        ),
      ]);
      expectNoGap(events);
      expect(events.at(-1)?.data).toMatchObject({ type: 'run.status', status: 'completed' });
      expect(await readiness(follower)).toEqual({
        status: 200,
        body: { status: 'ok', checks: { store: 'ok', queue: 'ok', events: 'ok' } },
      });
      expect(follower.logs()).toContain(
        "lost the PostgreSQL listener that hears other nodes' events",
      );
      expect(follower.logs()).toContain("listening to other nodes' events again");
      expect(follower.logs()).not.toContain(CLUSTER_DB_PASSWORD);
    } finally {
      await holder.server.close({ timeoutMs: 1_000 });
      await follower.server.close({ timeoutMs: 1_000 });
    }
  });

  it('a turn that ends while PostgreSQL is down is recorded once it is back, with the events of the outage: the run ends as its turn did, not running for good', async () => {
    const proxy = await proxyTo(cluster.storeUrl, 5432);
    const worker = await cluster.startApiNode({ role: 'all', storeUrl: proxy.url });
    const observer = await cluster.startApiNode();
    try {
      // A run of the same work without an outage, for its events.
      gates.open('no-outage');
      const calm = await createRun(observer, 'scenario:no-outage');
      expect((await ended(observer, calm)).status).toBe('completed');
      const calmEvents = await (await follow(observer, calm)).done;
      const runId = await createRun(observer, 'scenario:end-in-outage');
      await gates.get('end-in-outage-arrived').promise;
      proxy.cut();
      gates.open('end-in-outage');
      await until(
        async () =>
          worker.logs().includes('could not store the end of a turn') ? true : undefined,
        'the worker to try to store the end',
      );
      expect((await runOf(observer, runId)).status).toBe('running');
      proxy.restore();

      const run = await ended(observer, runId);
      expect(run).toMatchObject({ status: 'completed', result: 'Done end-in-outage.' });
      const replay = await follow(observer, runId);
      const events = await replay.done;
      expect(events.at(-1)?.data).toMatchObject({ type: 'run.status', status: 'completed' });
      // What happened while it was down is kept too, in order: the same events as without.
      expectNoGap(events);
      const kinds = (list: readonly ApiEvent[]) =>
        list.map((event) => `${event.data.type} ${event.agentId ?? ''}`);
      expect(kinds(events)).toEqual(kinds(calmEvents));
      expect(events.map((event) => event.data.type)).toContain('agent.usage');
      expect(worker.logs()).toContain('could not store events; keeping them and trying again');
      expect(worker.logs()).not.toContain('until the server restarts');
      expect(worker.logs()).not.toContain(CLUSTER_DB_PASSWORD);
    } finally {
      await worker.server.close({ timeoutMs: 1_000 });
      await observer.server.close({ timeoutMs: 1_000 });
    }
  });

  it('a worker stopped (SIGSTOP) past its lock time and then woken lets go of the run another worker took over: nothing more of it is stored, usage is counted once', async () => {
    const observer = await cluster.startApiNode();
    const stalled = await cluster.startWorker();
    try {
      const runId = await createRun(observer, 'scenario:stall');
      await gates.get('stall-arrived').promise;
      stalled.child.kill('SIGSTOP');
      const taker = await cluster.startWorker();
      const done = await ended(observer, runId, 60_000).catch((error: unknown) => {
        // What each process said, to tell which one held the run.
        for (const [name, text] of <[string, string][]>[
          ['stalled worker', stalled.output()],
          ['taking worker', taker.output()],
          ['observer', observer.logs()],
        ])
          process.stderr.write(`--- ${name} (last 3000 characters)\n${text.slice(-3000)}\n`);
        throw error;
      });
      expect(done).toMatchObject({ status: 'completed', result: 'Done stall after a takeover.' });
      const before = await follow(observer, runId);
      const eventsBefore = await before.done;
      // Its answer reaches the stopped worker, which then wakes up.
      gates.open('stall');
      stalled.child.kill('SIGCONT');
      await until(
        async () =>
          stalled.output().includes('lost the run to another worker') ? true : undefined,
        'the woken worker to let go',
      );
      // Whatever it would still write has had time to land.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const after = await follow(observer, runId);
      const eventsAfter = await after.done;
      expect(eventsAfter).toEqual(eventsBefore);
      expectNoGap(eventsAfter);
      expect(
        eventsAfter.filter(
          (event) => event.data.type === 'run.status' && event.data.status === 'completed',
        ),
      ).toHaveLength(1);
      expect(await runOf(observer, runId)).toEqual(done);
      taker.child.kill('SIGTERM');
      expect((await taker.exit).code).toBe(0);
    } finally {
      if (stalled.child.exitCode === null) stalled.child.kill('SIGKILL');
      await observer.server.close({ timeoutMs: 1_000 });
    }
  });

  it('a run whose queue job Redis lost and whose worker then died is taken over by the next worker, and can be cancelled there', async () => {
    const observer = await cluster.startApiNode();
    const doomed = await cluster.startWorker();
    let taker: Awaited<ReturnType<Cluster['startWorker']>> | undefined;
    try {
      const runId = await createRun(observer, 'scenario:orphan-hold');
      await gates.get('orphan-hold-arrived-1').promise;
      // Redis loses its data (a restart without persistence), then the worker dies.
      const redis = openRedis(TEST_REDIS_URL);
      const keys = await redis.keys(`${cluster.prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
      doomed.child.kill('SIGKILL');
      await doomed.exit;
      expect((await runOf(observer, runId)).status).toBe('running');

      taker = await cluster.startWorker();
      await until(
        async () => (arrivals.get('orphan-hold') === 2 ? true : undefined),
        'the takeover',
      );
      const events = await until(async () => {
        const response = await observer.api(`/v1/runs/${runId}/events?after=0`, {
          headers: { accept: 'text/event-stream' },
          signal: AbortSignal.timeout(1_000),
        });
        const seen: ApiEvent[] = [];
        await readSse(response, {
          stop: (event) => {
            seen.push(event.data);
            return event.data.type === 'run.failover';
          },
        }).catch(() => undefined);
        return seen.some((event) => event.type === 'run.failover') ? seen : undefined;
      }, 'the run.failover event');
      expect(events.at(-1)?.data).toMatchObject({ type: 'run.failover' });
      const cancel = await observer.api(`/v1/runs/${runId}/cancel`, { method: 'POST' });
      expect(cancel.status).toBe(202);
      expect((await ended(observer, runId)).status).toBe('cancelled');
      expect(taker.output()).toContain('queued for a takeover');
    } finally {
      if (doomed.child.exitCode === null) doomed.child.kill('SIGKILL');
      if (taker) {
        taker.child.kill('SIGTERM');
        await taker.exit;
      }
      await observer.server.close({ timeoutMs: 1_000 });
    }
  });

  it('while Redis is down, a new run is answered 503 and withdrawn (a retry starts the only run), a message is answered 503 and kept, /readyz says the queue is unreachable, and the log says so', async () => {
    const proxy = await proxyTo(TEST_REDIS_URL, 6379);
    const node = await cluster.startApiNode({ queueUrl: proxy.url });
    // The worker reaches Redis directly: only the API node loses it.
    const worker = await cluster.startWorker();
    try {
      gates.open('kept');
      const kept = await createRun(node, 'scenario:kept before the outage');
      expect((await ended(node, kept)).status).toBe('completed');
      proxy.cut();
      await until(
        async () =>
          node.logs().includes('lost the connection to the Redis queue') ? true : undefined,
        'the log line',
      );
      const refused = await node.api('/v1/runs', {
        json: { prompt: 'scenario:refused while Redis is down', workspace: cluster.workspace },
        signal: AbortSignal.timeout(20_000),
      });
      expect(refused.status).toBe(503);
      expect((await json<{ error: { message: string } }>(refused)).error.message).toMatch(
        /run queue \(Redis\) did not answer.*not started and will not be: send the request again/,
      );
      const message = await node.api(`/v1/runs/${kept}/messages`, {
        json: { text: 'and once more while Redis is down' },
        signal: AbortSignal.timeout(20_000),
      });
      expect(message.status).toBe(503);
      expect((await json<{ error: { message: string } }>(message)).error.message).toMatch(
        /run queue \(Redis\) did not answer.*The message is stored .* so do not send it again/,
      );
      expect(await readiness(node)).toEqual({
        status: 503,
        body: {
          status: 'unavailable',
          checks: { store: 'ok', queue: 'unreachable', events: 'ok' },
        },
      });
      proxy.restore();
      await until(
        async () => (node.logs().includes('the Redis queue answers again') ? true : undefined),
        'the log line of its return',
      );
      expect((await readiness(node)).status).toBe(200);
      // The message's turn runs once Redis is back.
      expect((await ended(node, kept)).status).toBe('completed');
      expect(arrivals.get('kept')).toBe(2);
      // The client sends the run again: one run does the work, the refused one stays failed,
      // though the job sent while Redis was away reached the queue once it was back.
      gates.open('refused');
      const retried = await createRun(node, 'scenario:refused while Redis is down');
      expect((await ended(node, retried)).status).toBe('completed');
      const list = await json<ApiRunList>(await node.api('/v1/runs?limit=100'));
      const withdrawn = list.runs.filter(
        (run) => run.prompt.startsWith('scenario:refused') && run.id !== retried,
      );
      expect(withdrawn).toMatchObject([
        { status: 'failed', error: { code: 'UNAVAILABLE', message: /^Not started: / } },
      ]);
      expect(arrivals.get('refused')).toBe(1);
    } finally {
      proxy.restore();
      worker.child.kill('SIGTERM');
      await worker.exit;
      await node.server.close({ timeoutMs: 1_000 });
    }
  });
});
