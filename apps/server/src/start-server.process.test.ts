import { readFileSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Sim, startSim } from '@delegate/api-sim';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiRun, json } from './__fixtures__/api-types.js';
import { Gates, scenarioPolicy } from './__fixtures__/scenario-policy.js';
import { type ServerProcess, spawnServer } from './__fixtures__/server-process.js';
import { TEST_API_KEY, readSse } from './__fixtures__/test-server.js';

const ENDED = ['completed', 'failed', 'cancelled', 'interrupted'];

// Child processes start slowly on a loaded machine: generous hang guards, no timing assertions.
describe('delegate-server as a process', { timeout: 240_000 }, () => {
  const gates = new Gates();
  let sim: Sim;
  let root: string;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    sim = await startSim({ policy: scenarioPolicy(gates) });
    root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-server-process-')));
  });
  afterEach(async () => {
    gates.reset();
    for (const server of running.splice(0)) {
      if (server.child.exitCode === null && server.child.signalCode === null)
        server.child.kill('SIGKILL');
      await server.exit;
    }
  });
  afterAll(async () => {
    await sim.close();
    await rm(root, { recursive: true, force: true });
  });

  async function setUp(name: string) {
    const base = join(root, name);
    const workspace = join(base, 'workspace');
    const home = join(base, 'home');
    await mkdir(workspace, { recursive: true });
    await mkdir(home, { recursive: true });
    const start = async (extra: string[] = []) => {
      const server = await spawnServer({
        args: [
          '--port',
          '0',
          '--data-dir',
          join(base, 'data'),
          '--workspace-root',
          workspace,
          ...extra,
        ],
        env: {
          PATH: process.env.PATH,
          HOME: home,
          ANTHROPIC_API_KEY: TEST_API_KEY,
          ANTHROPIC_BASE_URL: sim.url,
        },
      });
      running.push(server);
      return server;
    };
    return { base, start };
  }

  function client(server: ServerProcess, token: string) {
    return (path: string, init: RequestInit & { json?: unknown } = {}) => {
      const { json, ...rest } = init;
      return fetch(`${server.url}${path}`, {
        ...rest,
        headers: {
          authorization: `Bearer ${token}`,
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(json === undefined ? {} : { method: 'POST', body: JSON.stringify(json) }),
      });
    };
  }

  async function until<T>(
    read: () => Promise<T>,
    check: (value: T) => boolean,
    what: string,
  ): Promise<T> {
    // A hang guard only: a loaded machine may take long, the outcome does not depend on it.
    const deadline = Date.now() + 100_000;
    while (Date.now() < deadline) {
      const value = await read();
      if (check(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  /** Each agent's status in a run, by its description. */
  function agentStates(value: ApiRun): Record<string, string> {
    return Object.fromEntries(value.agents.map((agent) => [agent.description, agent.status]));
  }

  /**
   * Starts the `bg` scenario through `api` and waits until its held background agent runs and the
   * quick one has finished; returns the run's id and a reader of it.
   */
  async function startHeldBackgroundRun(api: ReturnType<typeof client>) {
    const created = (await (await api('/v1/runs', { json: { prompt: 'scenario:bg' } })).json()) as {
      id: string;
    };
    const read = () =>
      api(`/v1/runs/${created.id}`).then((response) => response.json() as Promise<ApiRun>);
    await until(
      read,
      (value) =>
        agentStates(value)['held background work'] === 'running' &&
        agentStates(value)['quick background work'] === 'completed',
      'the held agent to run',
    );
    return { id: created.id, read };
  }

  it('prints a generated token once, and after SIGKILL mid-run marks the run interrupted with its events, then resumes it', async () => {
    const { base, start } = await setUp('kill');
    const first = await start();
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(first.stderr())?.[1];
    expect(token).toBeDefined();
    const api = client(first, token!);
    const created = await startHeldBackgroundRun(api);
    const before = await readSse(await api(`/v1/runs/${created.id}/events`), {
      stop: (event) => event.event === 'agent.completed',
    });
    first.child.kill('SIGKILL');
    expect((await first.exit).signal).toBe('SIGKILL');

    const second = await start();
    expect(second.stderr()).not.toContain(token!);
    const again = client(second, token!);
    const interrupted = await json<ApiRun>(await again(`/v1/runs/${created.id}`));
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.error?.code).toBe('INTERRUPTED');
    const states = Object.fromEntries(
      interrupted.agents.map((agent) => [agent.description, agent.status]),
    );
    expect(states['held background work']).toBe('interrupted');
    expect(states['quick background work']).toBe('completed');
    // No task is left running: the process that ran them is gone.
    expect(interrupted.tasks.length).toBeGreaterThan(0);
    expect(interrupted.tasks.filter((task) => task.status === 'running')).toEqual([]);
    const replay = await readSse(await again(`/v1/runs/${created.id}/events`));
    // Every event seen before the kill is still there, in place, followed by the interruption.
    expect(replay.events.slice(0, before.events.length).map((event) => event.data)).toEqual(
      before.events.map((event) => event.data),
    );
    expect(replay.events.map((event) => event.id)).toEqual(
      replay.events.map((_, index) => index + 1),
    );
    expect(replay.events.at(-1)!.data.data).toMatchObject({
      type: 'run.status',
      status: 'interrupted',
    });

    gates.open('bg');
    expect((await again(`/v1/runs/${created.id}/resume`, { method: 'POST' })).status).toBe(202);
    const resumed = await until(
      () => again(`/v1/runs/${created.id}`).then((response) => response.json() as Promise<ApiRun>),
      (value) => ENDED.includes(value.status),
      'the resumed run',
    );
    expect(resumed.status).toBe('completed');
    expect(resumed.result).toBe('Main saw the background agents end.');
    expect(resumed.tasks.filter((task) => task.status === 'running')).toEqual([]);
    const held = resumed.agents.find((agent) => agent.description === 'held background work');
    expect(held?.status).toBe('completed');
    const transcript = await (
      await again(`/v1/runs/${created.id}/transcript?agent=${held!.agentId}`)
    ).text();
    expect(transcript).toContain('Background work done.');
    const all = await readSse(await again(`/v1/runs/${created.id}/events`));
    expect(all.events.map((event) => event.id)).toEqual(all.events.map((_, index) => index + 1));
    for (const log of [first.stdout(), second.stdout()]) {
      expect(log).not.toContain(token!);
      expect(log).not.toContain(TEST_API_KEY);
    }
    expect(await readFile(join(base, 'data', 'server-token'), 'utf8')).toBe(`${token}\n`);
  });

  it('on SIGTERM stops taking work, lets a turn finish within the grace time and interrupts the rest', async () => {
    const { start } = await setUp('term');
    const server = await start(['--shutdown-timeout-ms', '1500']);
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(server.stderr())![1]!;
    const api = client(server, token);
    const held = (await (await api('/v1/runs', { json: { prompt: 'scenario:hold' } })).json()) as {
      id: string;
    };
    const quick = (await (await api('/v1/runs', { json: { prompt: 'scenario:fg' } })).json()) as {
      id: string;
    };
    const get = (id: string) =>
      api(`/v1/runs/${id}`).then((response) => response.json() as Promise<ApiRun>);
    await until(
      () => get(held.id),
      (run) => run.status === 'running',
      'the held run',
    );
    await until(
      () => get(quick.id),
      (run) => run.agents.some((agent) => agent.mode === 'foreground'),
      'the foreground agent',
    );
    const stream = api(`/v1/runs/${held.id}/events`).then((response) => readSse(response));

    server.child.kill('SIGTERM');
    await until(
      () => fetch(`${server.url}/readyz`).then((response) => response.status),
      (status) => status === 503,
      'readyz to refuse',
    );
    expect((await api('/v1/runs', { json: { prompt: 'scenario:hello' } })).status).toBe(503);
    gates.open('fg');
    expect(await server.exit).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toContain('SIGTERM, shutting down');
    const heldEvents = await stream;
    expect(heldEvents.events.at(-1)!.data.data).toMatchObject({
      type: 'run.status',
      status: 'interrupted',
    });

    const after = await start();
    const again = client(after, token);
    const read = (id: string) =>
      again(`/v1/runs/${id}`).then((response) => response.json() as Promise<ApiRun>);
    expect((await read(quick.id)).status).toBe('completed');
    const interrupted = await read(held.id);
    expect(interrupted.status).toBe('interrupted');
    expect(interrupted.error?.message).toMatch(/shut down/);
    gates.open('hold');
    expect((await again(`/v1/runs/${held.id}/resume`, { method: 'POST' })).status).toBe(202);
    const resumed = await until(
      () => read(held.id),
      (run) => ENDED.includes(run.status),
      'the resumed run',
    );
    expect(resumed).toMatchObject({ status: 'completed', result: 'Released.' });
  });

  it('on SIGTERM marks a background agent it stopped interrupted, so resuming the run resumes it', async () => {
    const { start } = await setUp('term-bg');
    const first = await start(['--shutdown-timeout-ms', '300']);
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(first.stderr())![1]!;
    const api = client(first, token);
    const created = await startHeldBackgroundRun(api);
    const states = agentStates;
    first.child.kill('SIGTERM');
    expect(await first.exit).toEqual({ code: 0, signal: null });

    const second = await start();
    const again = client(second, token);
    const read = () =>
      again(`/v1/runs/${created.id}`).then((response) => response.json() as Promise<ApiRun>);
    const interrupted = await read();
    expect(interrupted.status).toBe('interrupted');
    // Stopped by the shutdown, not by a person: it is resumed with the run, as after a crash.
    expect(states(interrupted)['held background work']).toBe('interrupted');
    gates.open('bg');
    expect((await again(`/v1/runs/${created.id}/resume`, { method: 'POST' })).status).toBe(202);
    const resumed = await until(read, (value) => ENDED.includes(value.status), 'the resumed run');
    expect(resumed.status).toBe('completed');
    expect(states(resumed)['held background work']).toBe('completed');
    expect(resumed.result).toBe('Main saw the background agents end.');
  });

  it('a message to a run interrupted by SIGKILL resumes its interrupted background agent too', async () => {
    const { start } = await setUp('kill-message');
    const first = await start();
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(first.stderr())![1]!;
    const api = client(first, token);
    const created = await startHeldBackgroundRun(api);
    const states = agentStates;
    // The held agent's first turn is checkpointed by then (it is what a resume starts from).
    await readSse(await api(`/v1/runs/${created.id}/events`), {
      stop: (event) => event.event === 'agent.completed',
    });
    first.child.kill('SIGKILL');
    await first.exit;

    const second = await start();
    const again = client(second, token);
    const read = () =>
      again(`/v1/runs/${created.id}`).then((response) => response.json() as Promise<ApiRun>);
    expect(states(await read())['held background work']).toBe('interrupted');
    gates.open('bg');
    const sent = await again(`/v1/runs/${created.id}/messages`, {
      json: { text: 'You were interrupted; go on.' },
    });
    expect(sent.status).toBe(202);
    const ended = await until(read, (value) => ENDED.includes(value.status), 'the next turn');
    expect(ended.status).toBe('completed');
    // Not left interrupted for good in a completed run (which cannot be resumed any more).
    expect(states(ended)['held background work']).toBe('completed');
    expect(ended.result).toBe('Main saw the background agents end.');
  });

  it('a background agent that cannot be resumed after SIGKILL ends failed, and its parent hears so once', async () => {
    const { base, start } = await setUp('kill-unresumable');
    const first = await start();
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(first.stderr())![1]!;
    const api = client(first, token);
    const created = await startHeldBackgroundRun(api);
    const held = (value: ApiRun) =>
      value.agents.find((agent) => agent.description === 'held background work');
    await readSse(await api(`/v1/runs/${created.id}/events`), {
      stop: (event) => event.event === 'agent.completed',
    });
    first.child.kill('SIGKILL');
    await first.exit;
    // As if the crash had come before the held agent's first checkpoint.
    const database = new Database(join(base, 'data', 'runs.sqlite'));
    const row = database
      .prepare(
        "select agent_id from agents where run_id = ? and description = 'held background work'",
      )
      .get(created.id) as { agent_id: string };
    database
      .prepare('delete from transcripts where run_id = ? and file like ?')
      .run(created.id, `%${row.agent_id}%`);
    database.close();
    await rm(join(base, 'data', 'transcripts'), { recursive: true, force: true });

    const second = await start();
    const again = client(second, token);
    const read = () =>
      again(`/v1/runs/${created.id}`).then((response) => response.json() as Promise<ApiRun>);
    expect((await again(`/v1/runs/${created.id}/resume`, { method: 'POST' })).status).toBe(202);
    const ended = await until(read, (value) => ENDED.includes(value.status), 'the resumed run');
    expect(ended.status).toBe('completed');
    // Not left interrupted in a run that went on without it.
    expect(held(ended)).toMatchObject({ status: 'failed' });
    expect(held(ended)?.error).toMatch(/could not be resumed/);
    expect(ended.result).toBe('Main saw the background agents end.');
    const transcript = await (await again(`/v1/runs/${created.id}/transcript`)).text();
    const delivered = transcript
      .split('\n')
      .filter(
        (line) => line.startsWith('{"type":"user"') && line.includes(`agent-id: ${row.agent_id}`),
      );
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toContain('status: failed');
  });

  it('after SIGKILL runs the runs that were still queued', async () => {
    const { start } = await setUp('queued');
    const first = await start(['--max-concurrent-runs', '1']);
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(first.stderr())![1]!;
    const api = client(first, token);
    const held = await json<{ id: string }>(
      await api('/v1/runs', { json: { prompt: 'scenario:hold' } }),
    );
    const waiting = await json<{ id: string }>(
      await api('/v1/runs', { json: { prompt: 'scenario:hello' } }),
    );
    await until(
      () => api(`/v1/runs/${held.id}`).then((response) => response.json() as Promise<ApiRun>),
      (run) => run.status === 'running',
      'the held run',
    );
    expect((await json<ApiRun>(await api(`/v1/runs/${waiting.id}`))).status).toBe('queued');
    first.child.kill('SIGKILL');
    await first.exit;

    const second = await start(['--max-concurrent-runs', '1']);
    const again = client(second, token);
    const done = await until(
      () => again(`/v1/runs/${waiting.id}`).then((response) => response.json() as Promise<ApiRun>),
      (run) => ENDED.includes(run.status),
      'the queued run',
    );
    expect(done).toMatchObject({ status: 'completed', result: 'Hello from the model.' });
    expect((await json<ApiRun>(await again(`/v1/runs/${held.id}`))).status).toBe('interrupted');
  });

  it("after SIGKILL stores the background shell of a finished run's kept session as killed, not running", async () => {
    const { start } = await setUp('stale-shell');
    const marker = `marker-${randomBytes(6).toString('hex')}`;
    // The shell is `bash -c "sleep 60; echo <marker>"`: its command line holds the marker.
    const shellRuns = () =>
      readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .some((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
          } catch {
            return false; // it ended meanwhile
          }
        });
    const first = await start();
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(first.stderr())![1]!;
    const api = client(first, token);
    const created = await json<{ id: string }>(
      await api('/v1/runs', {
        json: { prompt: `scenario:shell-long ${marker}`, permissionMode: 'bypassPermissions' },
      }),
    );
    const run = await until(
      () => api(`/v1/runs/${created.id}`).then((response) => response.json() as Promise<ApiRun>),
      (value) => ENDED.includes(value.status),
      'the run',
    );
    // The session is kept for a next message, and its shell runs on.
    expect(run.status).toBe('completed');
    expect(run.tasks).toContainEqual(
      expect.objectContaining({ type: 'local_bash', status: 'running' }),
    );
    expect(shellRuns()).toBe(true);
    first.child.kill('SIGKILL');
    await first.exit;
    // Nothing could stop it: the server died without running its exit hook.
    expect(shellRuns()).toBe(true);

    const second = await start();
    const again = client(second, token);
    // Recovered before the server answers as ready.
    await until(
      () => fetch(`${second.url}/readyz`).then((response) => response.status),
      (status) => status === 200,
      'the restarted server to be ready',
    );
    const after = await json<ApiRun>(await again(`/v1/runs/${created.id}`));
    expect(after.status).toBe('completed');
    expect(after.tasks).toContainEqual(
      expect.objectContaining({ type: 'local_bash', description: 'wait long', status: 'killed' }),
    );
    expect(second.stdout()).toContain('"staleTasks":1');
    // The restarted server killed the shell the dead one left.
    expect(second.stdout()).toContain('"reapedShells":1');
    expect(shellRuns()).toBe(false);
  });

  it('runs the demo on the in-process simulator with --sim demo', async () => {
    const { start } = await setUp('sim');
    const server = await start(['--sim', 'demo']);
    const token = /\n\n {2}(dst_\S+)\n\n/.exec(server.stderr())![1]!;
    const api = client(server, token);
    const created = await json<{ id: string }>(
      await api('/v1/runs', { json: { prompt: 'Audit', fork: true } }),
    );
    const run = await until(
      () => api(`/v1/runs/${created.id}`).then((response) => response.json() as Promise<ApiRun>),
      (value) => ENDED.includes(value.status),
      'the demo run',
    );
    expect(run.result).toBe('Every sub-agent has reported back: the audit is complete.');
    expect(run.agents.map((agent) => agent.agentType).sort()).toEqual([
      'fork',
      'fork',
      'general-purpose',
      'main',
    ]);
  });

  it('refuses a bad configuration with the flag named and exits 1', async () => {
    const { start } = await setUp('config');
    await expect(start(['--port', 'eighty'])).rejects.toThrow(
      /--port: must be a whole number, got "eighty"/,
    );
  });
});
