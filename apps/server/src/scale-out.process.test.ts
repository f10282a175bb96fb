import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Policy } from '@delegate/api-sim';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiNode,
  CLUSTER_DB_PASSWORD,
  type Cluster,
  startCluster,
} from './__fixtures__/cluster.js';
import { Gates } from './__fixtures__/scenario-policy.js';
import { type ApiEvent, type ApiRun, json } from './__fixtures__/api-types.js';
import { TEST_TOKEN, readSse } from './__fixtures__/test-server.js';
import { probeTestServices } from './__fixtures__/services.js';

const services = await probeTestServices();

describe.runIf(services.postgres && services.redis)('with PostgreSQL and Redis servers', () => {
  const gates = new Gates();
  let parallelArrivals = 0;

  const policy: Policy = async (request) => {
    const text = JSON.stringify(request.messages);
    const main = request.agent === undefined;
    if (text.includes('scenario:parallel')) {
      // Answers only once two runs wait at the same time: with one run per worker, that takes two workers.
      parallelArrivals += 1;
      if (parallelArrivals >= 2) gates.open('parallel');
      await gates.get('parallel').promise;
      return 'Parallel work done.';
    }
    if (text.includes('scenario:hold')) {
      gates.open('hold-arrived');
      await gates.get('hold').promise;
      return 'Released.';
    }
    if (text.includes('scenario:doomed')) {
      gates.open('doomed-arrived');
      await gates.get('never').promise;
      return 'Not reached.';
    }
    if (text.includes('scenario:drain')) {
      if (request.lastUserText.includes('shut down')) return 'Resumed after the drain.';
      gates.open('drain-arrived');
      await gates.get('never').promise;
      return 'Not reached.';
    }
    if (text.includes('scenario:treefail')) return treePolicy(request);
    if (text.includes('scenario:subtoolfail')) return subToolPolicy(request);
    if (text.includes('scenario:toolfail')) {
      const glob = request.toolResults.find((result) => result.toolName === 'Glob');
      const bash = request.toolResults.find((result) => result.toolName === 'Bash');
      if (glob && bash) return `Glob said: ${glob.content} | Bash said: ${bash.content}`;
      return [
        { type: 'tool_use', name: 'Glob', input: { pattern: '*' } },
        {
          type: 'tool_use',
          name: 'Bash',
          input: { command: 'echo ran >> started-marker; sleep 20', description: 'slow write' },
        },
      ];
    }
    if (!text.includes('scenario:failover')) return 'No scenario.';
    if (!main) {
      if (request.lastUserText.includes('interrupted'))
        return 'Sub-agent finished after the takeover.';
      if (request.toolResults.length === 0)
        return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
      // The second turn of the sub-agent: held until its worker is killed.
      gates.open('sub-second-turn');
      await gates.get('never').promise;
      return 'Not reached.';
    }
    if (request.lastUserText.includes('<task-notification>'))
      return 'Main saw the resumed agent finish.';
    if (request.toolResults.length > 0) return 'Waiting for the resumed agent.';
    return [
      {
        type: 'tool_use',
        name: 'Agent',
        input: {
          description: 'failover work',
          prompt: 'scenario:failover work',
          subagent_type: 'general-purpose',
        },
      },
    ];
  };

  /** A main agent with a background sub-agent and a background fork, both cut off in their second turn. */
  async function treePolicy(request: Parameters<Policy>[0]): Promise<Awaited<ReturnType<Policy>>> {
    if (request.agent === undefined) {
      if (request.lastUserText.includes('<task-notification>')) return 'Main got a report.';
      if (request.lastUserText.includes('another worker took over')) return 'Noted the takeover.';
      if (request.toolResults.length > 0) return 'Started both.';
      return [
        {
          type: 'tool_use',
          name: 'Agent',
          input: {
            description: 'background survey',
            prompt: 'scenario:treefail survey',
            subagent_type: 'general-purpose',
            run_in_background: true,
          },
        },
        {
          type: 'tool_use',
          name: 'Agent',
          input: {
            description: 'background fork',
            prompt: 'Directive: audit the parser',
            run_in_background: true,
          },
        },
      ];
    }
    const kind = request.agent === 'general-purpose' ? 'sub' : 'fork';
    if (request.lastUserText.includes('previous run was interrupted'))
      return `The ${kind} finished after the takeover.`;
    const ownResults = request.toolResults.filter((result) => result.toolName === 'Glob');
    if (ownResults.length === 0)
      return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
    gates.open(`tree-${kind}-second-turn`);
    await gates.get('never').promise;
    return 'Not reached.';
  }

  /** A background sub-agent cut off while its Glob and its slow Bash command run. */
  function subToolPolicy(request: Parameters<Policy>[0]): Awaited<ReturnType<Policy>> {
    if (request.agent === undefined) {
      if (request.lastUserText.includes('<task-notification>')) return 'Main got the report.';
      if (request.lastUserText.includes('another worker took over')) return 'Noted the takeover.';
      if (request.toolResults.length > 0) return 'Started the survey.';
      return [
        {
          type: 'tool_use',
          name: 'Agent',
          input: {
            description: 'survey with tools',
            prompt: 'scenario:subtoolfail survey',
            subagent_type: 'general-purpose',
            run_in_background: true,
          },
        },
      ];
    }
    const glob = request.toolResults.find((result) => result.toolName === 'Glob');
    const bash = request.toolResults.find((result) => result.toolName === 'Bash');
    if (glob && bash) return `Sub Glob said: ${glob.content} | Sub Bash said: ${bash.content}`;
    return [
      { type: 'tool_use', name: 'Glob', input: { pattern: '*' } },
      {
        type: 'tool_use',
        name: 'Bash',
        input: { command: 'echo ran >> sub-marker; sleep 20', description: 'slow write' },
      },
    ];
  }

  async function until<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
    // A hang guard only: the outcome never depends on how long it takes.
    for (let attempt = 0; attempt < 1_500; attempt++) {
      const value = await check();
      if (value !== undefined) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  async function runOf(node: ApiNode, runId: string): Promise<ApiRun> {
    return json<ApiRun>(await node.api(`/v1/runs/${runId}`));
  }

  async function createRun(node: ApiNode, workspace: string, prompt: string): Promise<string> {
    const response = await node.api('/v1/runs', { json: { prompt, workspace } });
    expect(response.status).toBe(201);
    return (await json<{ id: string }>(response)).id;
  }

  async function replay(node: ApiNode, runId: string): Promise<ApiEvent[]> {
    const response = await node.api(`/v1/runs/${runId}/events`, {
      headers: { accept: 'text/event-stream' },
    });
    expect(response.status).toBe(200);
    return (await readSse(response)).events.map((event) => event.data);
  }

  function expectNoGap(events: readonly ApiEvent[]): void {
    expect(events.map((event) => event.seq)).toEqual(events.map((_event, index) => index + 1));
  }

  describe('several workers on one PostgreSQL store and one BullMQ queue', () => {
    let cluster: Cluster;
    let first: ApiNode;
    let second: ApiNode;

    beforeAll(async () => {
      cluster = await startCluster({ policy, failoverAfterMs: 2_000 });
      first = await cluster.startApiNode();
      second = await cluster.startApiNode();
    });
    afterAll(async () => {
      gates.openAll();
      await cluster?.close();
    });

    it('two workers take runs in parallel; a cancel sent to one API node stops a run a worker holds; SSE from another node replays it whole; SIGTERM drains a worker', async () => {
      const workers = [await cluster.startWorker(), await cluster.startWorker()];
      const runs = [
        await createRun(first, cluster.workspace, 'scenario:parallel one'),
        await createRun(first, cluster.workspace, 'scenario:parallel two'),
      ];
      for (const runId of runs)
        expect(
          (
            await until(async () => {
              const run = await runOf(second, runId);
              return run.status === 'completed' ? run : undefined;
            }, 'the parallel runs')
          ).result,
        ).toBe('Parallel work done.');

      const held = await createRun(first, cluster.workspace, 'scenario:hold');
      await gates.get('hold-arrived').promise;
      // Followed live from an API node that neither created nor runs it: events arrive by NOTIFY.
      const live = replay(second, held);
      const cancel = await second.api(`/v1/runs/${held}/cancel`, { method: 'POST' });
      expect(cancel.status).toBe(202);
      const cancelled = await until(async () => {
        const run = await runOf(first, held);
        return run.status === 'cancelled' ? run : undefined;
      }, 'the cancel');
      expect(cancelled.error?.code).toBe('ABORTED');
      const followed = await live;
      expectNoGap(followed);
      expect(followed.at(-1)?.data).toMatchObject({ type: 'run.status', status: 'cancelled' });
      const events = await replay(second, held);
      expect(events).toEqual(followed);
      expect(events.map((event) => event.type)).toContain('run.input');
      expect(events.at(-1)?.data).toMatchObject({ type: 'run.status', status: 'cancelled' });

      for (const worker of workers) worker.child.kill('SIGTERM');
      for (const worker of workers) expect((await worker.exit).code).toBe(0);
    });

    it('a worker killed with SIGKILL in the middle of a sub-agent turn: another worker resumes the run from its last finished turn, no finished request is sent twice, the log has no gap', async () => {
      const doomed = await cluster.startWorker();
      const runId = await createRun(first, cluster.workspace, 'scenario:failover start');
      await gates.get('sub-second-turn').promise;
      // The sub-agent's first turn (its Glob call and result) is in the store before the kill.
      const database = new pg.Client({ connectionString: cluster.storeUrl });
      await database.connect();
      try {
        await until(async () => {
          const { rows } = await database.query(
            `select content from transcripts where run_id = $1 and file like '%/agents/%.jsonl'`,
            [runId],
          );
          return rows.some((row: { content: string }) => row.content.includes('tool_result'))
            ? true
            : undefined;
        }, 'the checkpoint of the first turn');
      } finally {
        await database.end();
      }
      const rescuer = await cluster.startWorker();
      doomed.child.kill('SIGKILL');
      expect((await doomed.exit).signal).toBe('SIGKILL');

      const run = await until(async () => {
        const current = await runOf(second, runId);
        return current.status === 'completed' || current.status === 'failed' ? current : undefined;
      }, 'the run to end on the other worker');
      expect(run.status).toBe('completed');
      expect(run.result).toBe('Main saw the resumed agent finish.');
      const sub = run.agents.find((agent) => agent.agentId !== 'main');
      expect(sub?.status).toBe('completed');
      // The killed worker's tasks ended with it: none is left running in a completed run.
      expect(run.tasks.length).toBeGreaterThan(0);
      expect(run.tasks.filter((task) => task.status === 'running')).toEqual([]);

      // No request whose response was finished is sent again.
      const finished = new Set<string>();
      const resent: number[] = [];
      for (const entry of cluster.sim.journal.entries) {
        const body = entry.body as { system?: unknown; messages?: unknown };
        const key = JSON.stringify([body.system, body.messages]);
        if (finished.has(key)) resent.push(entry.index);
        if (entry.status === 200 && entry.error === undefined) finished.add(key);
      }
      expect(resent).toEqual([]);
      // The resumed sub-agent went on from its stored first turn (its Glob result), not from scratch.
      const resumed = cluster.sim.journal.entries.filter(
        (entry) =>
          entry.headers['x-delegate-agent'] !== undefined &&
          JSON.stringify(entry.body).includes('previous run was interrupted'),
      );
      expect(resumed).toHaveLength(1);
      expect(JSON.stringify(resumed[0]!.body)).toContain('"name":"Glob"');
      expect(resumed[0]!.status).toBe(200);

      const events = await replay(second, runId);
      expectNoGap(events);
      const failover = events.find((event) => event.type === 'run.failover');
      expect(failover?.data).toMatchObject({ failovers: 1 });
      expect(
        events.filter((event) => event.type === 'agent.retried').map((event) => event.agentId),
      ).toEqual(expect.arrayContaining(['main', sub!.agentId]));
      expect(events.at(-1)?.data).toMatchObject({ type: 'run.status', status: 'completed' });
      // Any API node serves the transcripts, from the store.
      const transcript = await first.api(`/v1/runs/${runId}/transcript?agent=${sub!.agentId}`);
      expect(transcript.status).toBe(200);
      const lines = (await transcript.text()).trim().split('\n');
      expect(lines.some((line) => line.includes('"name":"Glob"'))).toBe(true);
      expect(lines.at(-1)).toContain('Sub-agent finished after the takeover');
      rescuer.child.kill('SIGTERM');
      expect((await rescuer.exit).code).toBe(0);
      // Workers log JSON lines to stdout and notices to stderr; neither shows the store's password.
      for (const worker of [doomed, rescuer]) {
        expect(worker.output()).toContain('delegate-server worker taking runs');
        expect(worker.output()).not.toContain(CLUSTER_DB_PASSWORD);
      }
    });

    it('resumes a background sub-agent and a background fork of a SIGKILLed worker from their stored turns', async () => {
      const doomed = await cluster.startWorker();
      const response = await first.api('/v1/runs', {
        json: { prompt: 'scenario:treefail start', workspace: cluster.workspace, fork: true },
      });
      expect(response.status).toBe(201);
      const runId = (await json<{ id: string }>(response)).id;
      await gates.get('tree-sub-second-turn').promise;
      await gates.get('tree-fork-second-turn').promise;
      const database = new pg.Client({ connectionString: cluster.storeUrl });
      await database.connect();
      try {
        await until(async () => {
          const { rows } = await database.query(
            `select file, content from transcripts where run_id = $1 and file like '%/agents/%.jsonl'`,
            [runId],
          );
          const stored = (rows as { file: string; content: string }[]).filter((row) =>
            row.content.includes('tool_result'),
          );
          return new Set(stored.map((row) => row.file)).size >= 2 ? true : undefined;
        }, 'the checkpoints of both agents');
      } finally {
        await database.end();
      }
      const journalBefore = cluster.sim.journal.entries.length;
      const rescuer = await cluster.startWorker();
      doomed.child.kill('SIGKILL');
      await doomed.exit;
      const run = await until(async () => {
        const current = await runOf(second, runId);
        const done = current.agents.filter(
          (agent) => agent.agentId !== 'main' && agent.status === 'completed',
        );
        return current.status === 'completed' && done.length === 2 ? current : undefined;
      }, 'the tree to finish on the other worker');
      const modes = run.agents
        .filter((agent) => agent.agentId !== 'main')
        .map((agent) => agent.mode)
        .sort();
      expect(modes).toEqual(['background', 'fork']);
      const resumed = cluster.sim.journal.entries
        .slice(journalBefore)
        .filter((entry) => JSON.stringify(entry.body).includes('previous run was interrupted'));
      // Each agent went on from its stored Glob turn.
      expect(resumed.map((entry) => entry.headers['x-delegate-agent']).sort()).toHaveLength(2);
      for (const entry of resumed) expect(JSON.stringify(entry.body)).toContain('"name":"Glob"');
      const finished = new Set<string>();
      for (const entry of cluster.sim.journal.entries) {
        const body = entry.body as { system?: unknown; messages?: unknown };
        const key = JSON.stringify([body.system, body.messages]);
        expect(finished.has(key)).toBe(false);
        if (entry.status === 200 && entry.error === undefined) finished.add(key);
      }
      const events = await replay(second, runId);
      expectNoGap(events);
      const retried = events
        .filter((event) => event.type === 'agent.retried')
        .map((event) => event.agentId);
      for (const agent of run.agents) expect(retried).toContain(agent.agentId);
      rescuer.child.kill('SIGTERM');
      expect((await rescuer.exit).code).toBe(0);
    });

    it('SIGTERM on a worker mid-turn: the background sub-agent and fork it stopped are resumed by the next worker', async () => {
      gates.reset();
      const leaving = await cluster.startWorker({ extraArgs: ['--shutdown-timeout-ms', '0'] });
      const response = await first.api('/v1/runs', {
        json: { prompt: 'scenario:treefail start', workspace: cluster.workspace, fork: true },
      });
      const runId = (await json<{ id: string }>(response)).id;
      await gates.get('tree-sub-second-turn').promise;
      await gates.get('tree-fork-second-turn').promise;
      const staying = await cluster.startWorker();
      leaving.child.kill('SIGTERM');
      expect((await leaving.exit).code).toBe(0);
      const run = await until(async () => {
        const current = await runOf(second, runId);
        return ['completed', 'failed', 'cancelled'].includes(current.status) &&
          current.agents.every((agent) => agent.status !== 'running')
          ? current
          : undefined;
      }, 'the run to end on the other worker');
      expect(run.status).toBe('completed');
      // Stopped by the shutdown, not by a person: both went on and reported.
      expect(
        run.agents.filter((agent) => agent.agentId !== 'main').map((agent) => agent.status),
      ).toEqual(['completed', 'completed']);
      expectNoGap(await replay(second, runId));
      staying.child.kill('SIGTERM');
      expect((await staying.exit).code).toBe(0);
    });

    /**
     * Starts a run on a worker, waits until its slow command is running and the checkpoint
     * of its tool calls (of the main agent or of a sub-agent) is in the store, starts a second
     * worker and SIGKILLs the first.
     */
    async function killWorkerInFlight(options: {
      prompt: string;
      marker: string;
      transcripts: 'main' | 'sub-agents';
    }) {
      const doomed = await cluster.startWorker();
      const response = await first.api('/v1/runs', {
        json: {
          prompt: options.prompt,
          workspace: cluster.workspace,
          permissionMode: 'bypassPermissions',
        },
      });
      expect(response.status).toBe(201);
      const runId = (await json<{ id: string }>(response)).id;
      const marker = join(cluster.workspace, options.marker);
      await until(async () => (existsSync(marker) ? true : undefined), 'the slow command to start');
      const files =
        options.transcripts === 'main' ? "not like '%/agents/%'" : "like '%/agents/%.jsonl'";
      const database = new pg.Client({ connectionString: cluster.storeUrl });
      await database.connect();
      try {
        await until(
          async () => {
            const { rows } = await database.query(
              `select content from transcripts where run_id = $1 and file ${files}`,
              [runId],
            );
            return rows.some((row: { content: string }) => row.content.includes('sleep 20'))
              ? true
              : undefined;
          },
          `the checkpoint of the ${options.transcripts === 'main' ? 'main agent' : 'sub-agent'}'s tool calls`,
        );
      } finally {
        await database.end();
      }
      const rescuer = await cluster.startWorker();
      doomed.child.kill('SIGKILL');
      await doomed.exit;
      return { runId, marker, rescuer };
    }

    it('after a takeover, runs a read-only call that was in flight again and reports the others as interrupted', async () => {
      const { runId, marker, rescuer } = await killWorkerInFlight({
        prompt: 'scenario:toolfail start',
        marker: 'started-marker',
        transcripts: 'main',
      });
      const run = await until(async () => {
        const current = await runOf(second, runId);
        return current.status === 'completed' ? current : undefined;
      }, 'the run to complete on the other worker');
      // Glob (read-only) ran again and saw the marker; Bash (it writes) did not run again.
      expect(run.result).toMatch(
        /^Glob said: .*started-marker.* \| Bash said: Interrupted: the run stopped before this call finished/s,
      );
      expect(await readFile(marker, 'utf8')).toBe('ran\n');
      rescuer.child.kill('SIGTERM');
      expect((await rescuer.exit).code).toBe(0);
    });

    it('after a takeover, runs a read-only call of a sub-agent that was in flight again and reports its others as interrupted', async () => {
      const { runId, marker, rescuer } = await killWorkerInFlight({
        prompt: 'scenario:subtoolfail start',
        marker: 'sub-marker',
        transcripts: 'sub-agents',
      });
      const run = await until(async () => {
        const current = await runOf(second, runId);
        const sub = current.agents.find((agent) => agent.agentId !== 'main');
        return current.status === 'completed' && sub?.status === 'completed' ? current : undefined;
      }, 'the run and its sub-agent to complete on the other worker');
      expect(run.result).toBe('Main got the report.');
      const sub = run.agents.find((agent) => agent.agentId !== 'main')!;
      const transcript = await first.api(`/v1/runs/${runId}/transcript?agent=${sub.agentId}`);
      expect(transcript.status).toBe(200);
      const report = (await transcript.text()).trim().split('\n').at(-1)!;
      // Glob (read-only) ran again on the new worker and saw the marker; Bash did not run again.
      expect(report).toMatch(
        /Sub Glob said: .*sub-marker.* \| Sub Bash said: Interrupted: the run stopped before this call finished/s,
      );
      expect(await readFile(marker, 'utf8')).toBe('ran\n');
      rescuer.child.kill('SIGTERM');
      expect((await rescuer.exit).code).toBe(0);
    });

    it('fails a run whose worker died more often than --max-failovers allows, saying why; a cancel before the takeover says why it cannot be carried out yet', async () => {
      const doomed = await cluster.startWorker({ extraArgs: ['--max-failovers', '0'] });
      const runId = await createRun(first, cluster.workspace, 'scenario:doomed');
      await gates.get('doomed-arrived').promise;
      doomed.child.kill('SIGKILL');
      await doomed.exit;
      // No worker is left to take the run over: nobody answers the cancel.
      const cancel = await first.api(`/v1/runs/${runId}/cancel`, { method: 'POST' });
      expect(cancel.status).toBe(409);
      expect(((await cancel.json()) as { error: { message: string } }).error.message).toMatch(
        /is running, but the worker holding it did not answer.*--failover-after/,
      );
      const next = await cluster.startWorker({ extraArgs: ['--max-failovers', '0'] });
      const run = await until(async () => {
        const current = await runOf(first, runId);
        return current.status === 'failed' ? current : undefined;
      }, 'the run to fail');
      expect(run.error?.code).toBe('FAILOVER_LIMIT');
      expect(run.error?.message).toMatch(/stopped 1 times.*--max-failovers/);
      expect(run.agents.find((agent) => agent.agentId === 'main')?.status).toBe('failed');
      expectNoGap(await replay(second, runId));
      next.child.kill('SIGTERM');
      expect((await next.exit).code).toBe(0);
    });

    it('SIGTERM hands a running turn back to the queue and another worker resumes it', async () => {
      const leaving = await cluster.startWorker({ extraArgs: ['--shutdown-timeout-ms', '0'] });
      const runId = await createRun(first, cluster.workspace, 'scenario:drain');
      await gates.get('drain-arrived').promise;
      const staying = await cluster.startWorker();
      leaving.child.kill('SIGTERM');
      expect((await leaving.exit).code).toBe(0);
      const run = await until(async () => {
        const current = await runOf(second, runId);
        return current.status === 'completed' ? current : undefined;
      }, 'the run to complete on the other worker');
      expect(run.result).toBe('Resumed after the drain.');
      const events = await replay(first, runId);
      expectNoGap(events);
      expect(
        events.filter((event) => event.type === 'agent.retried').map((event) => event.data),
      ).toEqual([{ type: 'agent.retried', agentId: 'main', reason: 'handoff' }]);
      expect(events.filter((event) => event.type === 'run.failover')).toEqual([]);
      staying.child.kill('SIGTERM');
      expect((await staying.exit).code).toBe(0);
    });

    it('reports readiness of the store and the queue, and metrics behind the token', async () => {
      const ready = await first.api('/readyz', { headers: { authorization: '' } });
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ok',
        checks: { store: 'ok', queue: 'ok', events: 'ok' },
      });
      const anonymous = await fetch(`${first.server.url}/metrics`);
      expect(anonymous.status).toBe(401);
      const metrics = await first.api('/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await metrics.text();
      const value = (sample: string) => {
        const line = text.split('\n').find((item) => item.startsWith(`${sample} `));
        return line === undefined ? undefined : Number(line.slice(sample.length + 1));
      };
      // Runs of the earlier tests: 2 parallel, the four failovers, the tree handed back on
      // SIGTERM and the drain completed; one cancelled; one failed.
      expect(value('delegate_runs{status="completed"}')).toBe(8);
      expect(value('delegate_runs{status="cancelled"}')).toBe(1);
      expect(value('delegate_runs{status="failed"}')).toBe(1);
      expect(value('delegate_failovers_total')).toBe(5);
      expect(value('delegate_queue_jobs{state="waiting"}')).toBe(0);
      // An API-only node takes no runs itself.
      expect(value('delegate_worker_concurrency')).toBe(0);
      expect(value('delegate_turns_total')).toBeGreaterThan(5);
      expect(text).toMatch(/^delegate_tokens_total\{model="[^"]+",kind="output"\} [1-9]\d*$/m);
      expect(text).toMatch(/^delegate_cost_usd_total\{model="[^"]+"\} \d/m);
      expect(text).not.toContain(TEST_TOKEN);
    });

    it('a worker with --health-port answers health probes and metrics scrapes, and nothing else', async () => {
      const worker = await cluster.startWorker({
        concurrency: 3,
        extraArgs: ['--health-port', '0'],
      });
      const url = /health checks on (http:\/\/\S+?)\/healthz/.exec(worker.stderr())?.[1];
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ok',
        checks: { store: 'ok', queue: 'ok', events: 'ok' },
      });
      // /metrics needs the token, as on an API node.
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      const wrong = await fetch(`${url}/metrics`, {
        headers: { authorization: 'Bearer not-the-token-at-all' },
      });
      expect(wrong.status).toBe(401);
      const metrics = await fetch(`${url}/metrics`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      });
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      // This process's own concurrency, and the store's counts like any node's.
      expect(text).toMatch(/^delegate_worker_concurrency 3$/m);
      expect(text).toMatch(/^delegate_runs\{status="completed"\} [1-9]\d*$/m);
      // No API and no dashboard on a worker, even with the token.
      const runs = await fetch(`${url}/v1/runs`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}` },
      });
      expect(runs.status).toBe(404);
      expect((await fetch(`${url}/`)).status).toBe(404);
      worker.child.kill('SIGTERM');
      expect((await worker.exit).code).toBe(0);
    });
  });
});
