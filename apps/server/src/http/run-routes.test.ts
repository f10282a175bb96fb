import { mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { costOfUsage } from '@delegate/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JournalUsage } from '@delegate/api-sim';
import type { z } from 'zod';
import { type ApiError, type ApiRun, type ApiRunList, json } from '../__fixtures__/api-types.js';
import type { AgentDefinitionsView } from './schemas.js';
import { Gates, scenarioPolicy } from '../__fixtures__/scenario-policy.js';
import { type TestServer, startTestServer, waitForRun } from '../__fixtures__/test-server.js';
import { openSqliteRunStore } from '../store/sqlite-run-store.js';

type AgentsBody = z.infer<typeof AgentDefinitionsView>;

const ENDED = ['completed', 'failed', 'cancelled', 'interrupted'];

describe('run routes', () => {
  const gates = new Gates();
  let test: TestServer;

  beforeAll(async () => {
    test = await startTestServer({
      policy: scenarioPolicy(gates),
      config: { bodyLimitBytes: 4_096 },
    });
    await mkdir(join(test.workspace, '.claude', 'agents'), { recursive: true });
    await writeFile(
      join(test.workspace, '.claude', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews code.\ncolor: purple\n---\nYou review code for the tests.\n',
    );
    await writeFile(
      join(test.workspace, '.claude', 'agents', 'broken.md'),
      '---\nname: [oops\n---\n',
    );
    await writeFile(
      join(test.workspace, '.claude', 'agents', 'plan.md'),
      '---\nname: Plan\ndescription: A project planner.\n---\nPlan it the project way.\n',
    );
    await mkdir(join(test.workspace, 'sub'));
    // Project agents are found from the working directory up to the repository root.
    await mkdir(join(test.workspace, '.git'));
  });
  afterEach(() => gates.reset());
  afterAll(() => test.close());

  async function start(body: Record<string, unknown>): Promise<string> {
    const response = await test.api('/v1/runs', { json: body });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  const ended = (run: ApiRun) => ENDED.includes(run.status);

  /** Runs a shell scenario (`shell`, `shell-long`) on a server of its own until its turn ends. */
  async function runShellScenario(server: TestServer, scenario: string): Promise<ApiRun> {
    const created = await json<{ id: string }>(
      await server.api('/v1/runs', {
        json: { prompt: `scenario:${scenario}`, permissionMode: 'bypassPermissions' },
      }),
    );
    return waitForRun(server, created.id, ended);
  }

  describe('POST /v1/runs', () => {
    it('creates a run, answers 201 with its id and location, and runs it to completion', async () => {
      const response = await test.api('/v1/runs', { json: { prompt: 'scenario:hello' } });
      expect(response.status).toBe(201);
      const body = (await response.json()) as { id: string; status: string; eventsUrl: string };
      expect(body.status).toBe('queued');
      expect(body.id).toMatch(/^run_[0-9a-f]{24}$/);
      expect(response.headers.get('location')).toBe(`/v1/runs/${body.id}`);
      expect(body.eventsUrl).toBe(`/v1/runs/${body.id}/events`);
      const run = await waitForRun(test, body.id, ended);
      expect(run).toMatchObject({
        status: 'completed',
        result: 'Hello from the model.',
        workspace: test.workspace,
      });
    });

    it('marks a run failed with the API error when its stream keeps failing mid-run', async () => {
      const id = await start({ prompt: 'scenario:api-fail' });
      const run = await waitForRun(test, id, ended);
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ code: 'API_ERROR' });
      expect(run.error?.message).toMatch(
        /The Messages API request of the main agent \(repl_main_thread\) failed: api_error: Internal server error \(request req_\w+\)/,
      );
      expect(run.agents.find((agent) => agent.agentId === 'main')?.status).toBe('failed');
    });

    it('completes a run whose background agent failed, with the failure in its agent tree', async () => {
      const id = await start({ prompt: 'scenario:bg-fail' });
      const run = await waitForRun(
        test,
        id,
        (current) => ended(current) && current.result?.startsWith('Main was told') === true,
      );
      expect(run.status).toBe('completed');
      expect(run.result).toContain('status: failed');
      expect(run.result).toContain('agent general-purpose');
      const child = run.agents.find((agent) => agent.agentId !== 'main');
      expect(child).toMatchObject({ status: 'failed' });
      expect(child?.error).toMatch(/api_error: Boom \(request req_\w+\)/);
    });

    it('runs in a workspace below the root and as a chosen agent', async () => {
      const id = await start({ prompt: 'scenario:reviewer', agent: 'reviewer', workspace: 'sub' });
      const run = await waitForRun(test, id, ended);
      expect(run.result).toBe('Running as the reviewer.');
      expect(run.workspace).toBe(join(test.workspace, 'sub'));
      expect(run.agents[0]).toMatchObject({
        agentId: 'main',
        agentType: 'reviewer',
        color: 'purple',
      });
    });

    it('passes the model and the tool rules to the session', async () => {
      test.sim.journal.clear();
      const id = await start({
        prompt: 'scenario:bash',
        model: 'haiku',
        permissionMode: 'bypassPermissions',
        disallowedTools: ['Bash(env)'],
      });
      const run = await waitForRun(test, id, ended);
      expect(run.agents[0]!.model).toMatch(/haiku/);
      expect(test.sim.journal.entries.every((entry) => /haiku/.test(entry.model ?? ''))).toBe(true);
      // The deny rule wins over bypassPermissions: the command never ran.
      expect(run.result).toMatch(/^Environment: .*denied/is);
      expect(run.result).not.toMatch(/PATH=/);
    });

    it.each([
      [{}, 'prompt'],
      [{ prompt: '' }, 'prompt'],
      [{ prompt: 'x', fork: 'yes' }, 'fork'],
      [{ prompt: 'x', permissionMode: 'godMode' }, 'permissionMode'],
      [{ prompt: 'x', allowedTools: ['Bash(ls'] }, 'allowedTools.0'],
      // No tool has such a name: the runtime refuses these rules, so a run would fail at start.
      [{ prompt: 'x', disallowedTools: ['Read', 'mcp__github__*'] }, 'disallowedTools.1'],
      [{ prompt: 'x', allowedTools: ['1Read'] }, 'allowedTools.0'],
      [{ prompt: 'x', colour: 'red' }, 'colour'],
    ])('refuses %j with a 400 naming %s', async (body, field) => {
      const response = await test.api('/v1/runs', { json: body });
      expect(response.status).toBe(400);
      const error = (
        (await response.json()) as { error: { field: string; message: string; code: string } }
      ).error;
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.field).toBe(field);
      expect(error.message).toContain(field);
    });

    it('refuses malformed JSON, a missing body and a body over the limit', async () => {
      const malformed = await test.api('/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"prompt": ',
      });
      expect(malformed.status).toBe(400);
      expect((await json<ApiError>(malformed)).error.message).toMatch(/JSON/);
      const missing = await test.api('/v1/runs', { method: 'POST' });
      expect(missing.status).toBe(400);
      const plain = await test.api('/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{"prompt":"x"}',
      });
      expect(plain.status).toBe(415);
      expect((await json<ApiError>(plain)).error.message).toMatch(/application\/json/);
      const large = await test.api('/v1/runs', { json: { prompt: 'x'.repeat(10_000) } });
      expect(large.status).toBe(413);
      // The rest of the body is left unread, so the connection is closed, not kept for reuse.
      expect(large.headers.get('connection')).toBe('close');
      expect((await json<ApiError>(large)).error.code).toBe('PAYLOAD_TOO_LARGE');
      // The next request (on a new connection) is answered.
      expect((await test.api('/v1/runs?limit=1')).status).toBe(200);
    });

    it('refuses a body in another charset (415) or not valid UTF-8 (400), and takes UTF-8 as sent', async () => {
      const latin1 = await test.api('/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=iso-8859-1' },
        body: Buffer.from('{"prompt":"caf\xe9"}', 'latin1'),
      });
      expect(latin1.status).toBe(415);
      expect((await json<ApiError>(latin1)).error.message).toMatch(
        /sent as iso-8859-1; send it as UTF-8/,
      );
      const broken = await test.api('/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from([
          0x7b, 0x22, 0x70, 0x72, 0x6f, 0x6d, 0x70, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d,
        ]),
      });
      expect(broken.status).toBe(400);
      expect((await json<ApiError>(broken)).error.message).toBe(
        'body: not valid UTF-8. Send the JSON as UTF-8 text.',
      );
      const utf8 = await test.api('/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=UTF-8' },
        body: JSON.stringify({ prompt: 'café' }),
      });
      expect(utf8.status).toBe(201);
      const { id } = await json<{ id: string }>(utf8);
      expect((await json<{ prompt: string }>(await test.api(`/v1/runs/${id}`))).prompt).toBe(
        'café',
      );
    });

    it('refuses workspaces outside the roots and traversal, naming the field', async () => {
      for (const workspace of ['../', '../data', '/etc', 'sub/../../', 'missing']) {
        const response = await test.api('/v1/runs', { json: { prompt: 'x', workspace } });
        expect(response.status, workspace).toBe(400);
        expect((await json<ApiError>(response)).error.field).toBe('workspace');
      }
    });

    it('answers a host path outside the roots the same whether it exists or not, for runs and agents', async () => {
      const answers: string[] = [];
      for (const workspace of ['/etc', '/etc/no-such-delegate-dir', test.dataDir, '/nope/x']) {
        for (const response of [
          await test.api('/v1/runs', { json: { prompt: 'x', workspace } }),
          await test.api(`/v1/agents?workspace=${encodeURIComponent(workspace)}`),
        ]) {
          expect(response.status, workspace).toBe(400);
          const error = (await json<ApiError>(response)).error;
          expect(error.code, workspace).toBe('PATH_ESCAPE');
          expect(error.field).toBe('workspace');
          answers.push(error.message.replace(workspace, '<path>'));
        }
      }
      // Nothing but the path itself differs: no "does not exist", no system error.
      expect(new Set(answers).size).toBe(1);
      expect(answers[0]).not.toMatch(/ENOENT|exist|realpath/);
      // Inside a root, a missing directory is said to be missing.
      const missing = await test.api('/v1/agents?workspace=missing');
      expect((await json<ApiError>(missing)).error.message).toMatch(/does not exist/);
    });

    it('takes a workspace written under a root given through a symbolic link', async () => {
      const link = join(test.root, 'workspace-link');
      await symlink(test.workspace, link);
      const local = await startTestServer({
        policy: scenarioPolicy(new Gates()),
        config: { workspaceRoots: [link] },
      });
      try {
        await mkdir(join(test.workspace, 'project'));
        const created = await local.api('/v1/runs', {
          json: { prompt: 'scenario:hello', workspace: join(link, 'project') },
        });
        expect(created.status).toBe(201);
        const run = await waitForRun(local, (await json<{ id: string }>(created)).id, ended);
        expect(run.workspace).toBe(join(test.workspace, 'project'));
        const agents = await local.api(
          `/v1/agents?workspace=${encodeURIComponent(join(link, 'project'))}`,
        );
        expect(agents.status).toBe(200);
        // A link inside the root that leads out is still refused (its real path is checked).
        await symlink('/etc', join(test.workspace, 'to-etc'));
        const escape = await local.api('/v1/runs', {
          json: { prompt: 'x', workspace: join(link, 'to-etc') },
        });
        expect((await json<ApiError>(escape)).error.code).toBe('PATH_ESCAPE');
      } finally {
        await local.close();
        await rm(join(test.workspace, 'project'), { recursive: true, force: true });
        await rm(join(test.workspace, 'to-etc'), { force: true });
        await rm(link, { force: true });
      }
    });

    it('refuses an unknown agent, listing the available ones', async () => {
      const response = await test.api('/v1/runs', { json: { prompt: 'x', agent: 'nobody' } });
      expect(response.status).toBe(400);
      const error = (await json<ApiError>(response)).error;
      expect(error.field).toBe('agent');
      expect(error.message).toMatch(/reviewer/);
    });
  });

  describe('GET /v1/runs and /v1/runs/:id', () => {
    it('pages runs newest first and filters by status', async () => {
      const first = await start({ prompt: 'scenario:hello page 1' });
      const second = await start({ prompt: 'scenario:hello page 2' });
      await waitForRun(test, second, ended);
      await waitForRun(test, first, ended);
      const page = await json<ApiRunList>(await test.api('/v1/runs?limit=1'));
      expect(page.runs.map((run) => run.id)).toEqual([second]);
      const next = await json<ApiRunList>(
        await test.api(`/v1/runs?limit=1&cursor=${page.nextCursor}`),
      );
      expect(next.runs.map((run) => run.id)).toEqual([first]);
      const completed = await json<ApiRunList>(
        await test.api('/v1/runs?status=completed&limit=200'),
      );
      expect(completed.runs.every((run) => run.status === 'completed')).toBe(true);
      expect(completed.runs.map((run) => run.id)).toContain(first);
    });

    it.each([
      ['status=nope', 'status'],
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['cursor=garbage', 'cursor'],
    ])('refuses ?%s naming %s', async (query, field) => {
      const response = await test.api(`/v1/runs?${query}`);
      expect(response.status).toBe(400);
      expect((await json<ApiError>(response)).error.field).toBe(field);
    });

    it('refuses a query parameter it does not know, naming it, on every route, before it acts', async () => {
      const id = await start({ prompt: 'scenario:hello' });
      await waitForRun(test, id, ended);
      const routes: [string, RequestInit & { json?: unknown }][] = [
        ['/v1/runs?stauts=running', {}],
        [`/v1/runs/${id}/events?afterr=3`, {}],
        [`/v1/runs/${id}/transcript?agnet=main`, {}],
        ['/v1/agents?workspce=x', {}],
        [`/v1/runs/${id}?view=full`, {}],
        ['/v1/runs?dryRun=1', { json: { prompt: 'scenario:hello' } }],
        [`/v1/runs/${id}/messages?bogus=1`, { json: { text: 'hi' } }],
        [`/v1/runs/${id}/resume?force=1`, { method: 'POST' }],
        [`/v1/runs/${id}/cancel?force=1`, { method: 'POST' }],
        [`/v1/runs/${id}/agents/main/cancel?force=1`, { method: 'POST' }],
        [`/v1/runs/${id}/agents/main/background?now=1`, { method: 'POST' }],
        ['/metrics?format=json', {}],
      ];
      const before = (await json<ApiRunList>(await test.api('/v1/runs?limit=200'))).runs.length;
      for (const [path, init] of routes) {
        const response = await test.api(path, init);
        expect(response.status, path).toBe(400);
        const body = await json<ApiError>(response);
        const name = path.split('?')[1]!.split('=')[0]!;
        expect(body.error.field, path).toBe(name);
        expect(body.error.message, path).toBe(`query.${name}: unknown parameter "${name}"`);
      }
      // Refused before anything was done: no run was created, the run was not continued.
      expect((await json<ApiRunList>(await test.api('/v1/runs?limit=200'))).runs).toHaveLength(
        before,
      );
      expect((await json<ApiRun>(await test.api(`/v1/runs/${id}`))).status).toBe('completed');
    });

    it('answers 404 for an unknown run and 400 for a malformed id', async () => {
      expect((await test.api('/v1/runs/run_000000000000000000000000')).status).toBe(404);
      expect((await test.api('/v1/runs/..%2F..%2Fetc')).status).toBe(400);
    });

    it('reports usage and cost per agent as the model billed them', async () => {
      test.sim.journal.clear();
      const id = await start({ prompt: 'scenario:bg', fork: true });
      gates.open('bg');
      const run = await waitForRun(test, id, ended);
      expect(run.status).toBe('completed');
      expect(run.agents.map((agent) => agent.agentType).sort()).toEqual([
        'general-purpose',
        'general-purpose',
        'main',
      ]);
      const answered = test.sim.journal.entries.filter(
        (entry) => entry.status === 200 && entry.usage,
      );
      const sum = (pick: (usage: JournalUsage) => number) =>
        answered.reduce((total, entry) => total + pick(entry.usage!), 0);
      expect(run.usage.input_tokens).toBe(sum((usage) => usage.input_tokens));
      expect(run.usage.output_tokens).toBe(sum((usage) => usage.output_tokens));
      expect(run.usage.cache_read_input_tokens).toBe(
        sum((usage) => usage.cache_read_input_tokens ?? 0),
      );
      expect(run.usage.cache_creation_input_tokens).toBe(
        sum((usage) => usage.cache_creation_input_tokens ?? 0),
      );
      const main = answered.filter((entry) => entry.headers['x-delegate-agent'] === undefined);
      const mainAgent = run.agents.find((agent) => agent.agentId === 'main');
      expect(mainAgent!.usage.output_tokens).toBe(
        main.reduce((total, entry) => total + entry.usage!.output_tokens, 0),
      );
      for (const agent of run.agents) {
        expect(agent.costUsd).toBeCloseTo(costOfUsage(agent.usage, agent.model).costUsd, 10);
        expect(agent.costUsd).toBeGreaterThan(0);
      }
      expect(run.costUsd).toBeCloseTo(
        run.agents.reduce((total: number, agent) => total + agent.costUsd, 0),
        10,
      );
      expect(run.tasks.length).toBeGreaterThanOrEqual(2);
    });
  });

  it('lists a background shell command among the tasks', async () => {
    const id = await start({ prompt: 'scenario:shell', permissionMode: 'bypassPermissions' });
    const run = await waitForRun(test, id, ended);
    expect(run.result).toBe('Started the shell.');
    expect(run.tasks).toContainEqual(
      expect.objectContaining({
        type: 'local_bash',
        description: 'wait a little',
        backgrounded: true,
      }),
    );
    // The session is kept for the next message, which may still read the shell's output.
    expect(await readdir(join(test.dataDir, 'task-output', id))).toHaveLength(1);
  });

  it("deletes a background shell's log when the run's session is closed", async () => {
    const local = await startTestServer({
      policy: scenarioPolicy(gates),
      config: { idleSessions: 0 },
    });
    try {
      const run = await runShellScenario(local, 'shell');
      expect(run.tasks).toContainEqual(expect.objectContaining({ type: 'local_bash' }));
      const directory = join(local.dataDir, 'task-output', run.id);
      let left = await readdir(directory);
      for (let attempt = 0; attempt < 250 && left.length > 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        left = await readdir(directory);
      }
      expect(left).toEqual([]);
    } finally {
      await local.close();
    }
  });

  it('stores a background shell the closing of its session stopped as killed, not running', async () => {
    const local = await startTestServer({
      policy: scenarioPolicy(gates),
      config: { idleSessions: 0 },
    });
    try {
      const run = await runShellScenario(local, 'shell-long');
      expect(run.result).toBe('Started the long shell.');
      const shell = await waitForRun(
        local,
        run.id,
        (current) =>
          current.tasks.some((task) => task.type === 'local_bash' && task.status !== 'running'),
        'the shell to be stored as ended',
      );
      expect(shell.tasks).toContainEqual(
        expect.objectContaining({ type: 'local_bash', description: 'wait long', status: 'killed' }),
      );
      expect(shell.tasks.find((task) => task.type === 'local_bash')?.endedAt).not.toBeNull();
    } finally {
      await local.close();
    }
  });

  it("stores an idle session's background shell as killed when the server closes", async () => {
    const local = await startTestServer({ policy: scenarioPolicy(gates) });
    try {
      const run = await runShellScenario(local, 'shell-long');
      // Kept idle for a next message: the shell still runs.
      expect(run.tasks).toContainEqual(
        expect.objectContaining({ type: 'local_bash', status: 'running' }),
      );
      await local.server.close({ timeoutMs: 2_000 });
      const store = openSqliteRunStore({ path: join(local.dataDir, 'runs.sqlite') });
      try {
        expect(await store.listTasks(run.id)).toContainEqual(
          expect.objectContaining({ type: 'local_bash', status: 'killed' }),
        );
      } finally {
        await store.close();
      }
    } finally {
      await local.close();
    }
  });

  it("deletes the log of an idle session's background shell when the server closes", async () => {
    const local = await startTestServer({ policy: scenarioPolicy(gates) });
    try {
      const run = await runShellScenario(local, 'shell');
      const directory = join(local.dataDir, 'task-output', run.id);
      // Kept idle for a next message, which may still read the shell's output.
      expect(await readdir(directory)).toHaveLength(1);
      await local.server.close({ timeoutMs: 2_000 });
      expect(await readdir(directory)).toEqual([]);
    } finally {
      await local.close();
    }
  });

  describe('POST /v1/runs/:id/messages', () => {
    it('continues a finished run with its conversation', async () => {
      const id = await start({ prompt: 'scenario:hello' });
      await waitForRun(test, id, ended);
      const response = await test.api(`/v1/runs/${id}/messages`, { json: { text: 'And now?' } });
      expect(response.status).toBe(202);
      const run = await waitForRun(
        test,
        id,
        (value) => ended(value) && value.result !== 'Hello from the model.',
      );
      expect(run.result).toBe('You said: And now? (turn 1)');
    });

    it('continues from the transcript when the session is no longer in memory', async () => {
      const local = await startTestServer({
        policy: scenarioPolicy(gates),
        config: { idleSessions: 0 },
      });
      try {
        const created = await json<{ id: string }>(
          await local.api('/v1/runs', { json: { prompt: 'scenario:hello' } }),
        );
        await waitForRun(local, created.id, ended);
        await local.api(`/v1/runs/${created.id}/messages`, { json: { text: 'Still there?' } });
        const run = await waitForRun(
          local,
          created.id,
          (value) => ended(value) && value.result !== 'Hello from the model.',
        );
        expect(run.result).toBe('You said: Still there? (turn 1)');
      } finally {
        await local.close();
      }
    });

    it('runs no more turns in a workspace whose directory a symbolic link replaced', async () => {
      const moved = join(test.workspace, 'moved');
      const outside = join(test.workspace, '..', 'outside');
      await mkdir(moved);
      await mkdir(outside, { recursive: true });
      const id = await start({ prompt: 'scenario:hello', workspace: 'moved' });
      await waitForRun(test, id, ended);
      // A pull or a script swaps the directory for a link out of the roots.
      await rename(moved, `${moved}.real`);
      await symlink(outside, moved);
      const response = await test.api(`/v1/runs/${id}/messages`, { json: { text: 'And now?' } });
      expect(response.status).toBe(202);
      const run = await waitForRun(
        test,
        id,
        (value) => ended(value) && value.status !== 'completed',
      );
      expect(run.status).toBe('failed');
      expect(run.error?.code).toBe('PATH_ESCAPE');
      expect(run.error?.message).toContain(`the run's workspace ${moved} now leads to`);
      expect(run.result).toBeNull();
    });

    it('refuses while the run works, for unknown runs and with a bad body', async () => {
      const id = await start({ prompt: 'scenario:hold' });
      await waitForRun(test, id, (run) => run.status === 'running');
      const busy = await test.api(`/v1/runs/${id}/messages`, { json: { text: 'hi' } });
      expect(busy.status).toBe(409);
      expect((await json<ApiError>(busy)).error.code).toBe('CONFLICT');
      expect(
        (await test.api('/v1/runs/run_000000000000000000000000/messages', { json: { text: 'hi' } }))
          .status,
      ).toBe(404);
      const bad = await test.api(`/v1/runs/${id}/messages`, { json: { message: 'hi' } });
      expect(bad.status).toBe(400);
      gates.open('hold');
      await waitForRun(test, id, ended);
    });
  });

  describe('POST /v1/runs/:id/cancel and /resume', () => {
    it('cancels a running run and then continues it on resume', async () => {
      const id = await start({ prompt: 'scenario:hold' });
      await waitForRun(test, id, (run) => run.status === 'running');
      const response = await test.api(`/v1/runs/${id}/cancel`, { method: 'POST' });
      expect(response.status).toBe(202);
      expect((await json<{ status: string }>(response)).status).toBe('cancelling');
      const run = await waitForRun(test, id, ended);
      expect(run.status).toBe('cancelled');
      expect(run.agents[0]!.status).toBe('cancelled');
      expect((await test.api(`/v1/runs/${id}/cancel`, { method: 'POST' })).status).toBe(409);
      gates.open('hold');
      const resumed = await test.api(`/v1/runs/${id}/resume`, { method: 'POST' });
      expect(resumed.status).toBe(202);
      const after = await waitForRun(test, id, (value) => value.status === 'completed');
      expect(after.result).toBe('Released.');
    });

    it('delivers on resume, once, a notification that was queued when the run was cancelled', async () => {
      const id = await start({ prompt: 'scenario:notify-resume' });
      // The background agent ends while the main agent's turn is held: its notification is queued.
      await waitForRun(test, id, (run) =>
        run.agents.some(
          (agent) => agent.agentType === 'general-purpose' && agent.status === 'completed',
        ),
      );
      await test.api(`/v1/runs/${id}/cancel`, { method: 'POST' });
      expect((await waitForRun(test, id, ended)).status).toBe('cancelled');
      const before = test.sim.journal.entries.length;
      const resumed = await test.api(`/v1/runs/${id}/resume`, { method: 'POST' });
      expect(resumed.status).toBe(202);
      const after = await waitForRun(test, id, (value) => value.status === 'completed');
      expect(after.result).toBe('Main heard 1 notification(s).');
      const main = test.sim.journal.entries
        .slice(before)
        .filter((entry) => entry.headers['x-delegate-agent'] === undefined);
      expect(main).toHaveLength(1);
      expect(JSON.stringify(main[0]!.body).split('<task-notification>\\ntask-id:')).toHaveLength(2);
    });

    it('does not resume an agent whose notification was recorded when the store still says it was working', async () => {
      const id = await start({ prompt: 'scenario:notify-resume' });
      await waitForRun(test, id, (run) =>
        run.agents.some(
          (agent) => agent.agentType === 'general-purpose' && agent.status === 'completed',
        ),
      );
      await test.api(`/v1/runs/${id}/cancel`, { method: 'POST' });
      expect((await waitForRun(test, id, ended)).status).toBe('cancelled');
      // A worker that died between writing the notification and storing the agent's end
      // leaves the agent interrupted in the store; the transcript knows it had finished.
      const agents = await test.server.store.listAgents(id);
      const worker = agents.find((agent) => agent.agentType === 'general-purpose')!;
      expect(worker.taskId).toBeTruthy();
      await test.server.store.upsertAgent({ ...worker, status: 'interrupted', endedAt: null });
      const before = test.sim.journal.entries.length;
      expect((await test.api(`/v1/runs/${id}/resume`, { method: 'POST' })).status).toBe(202);
      const after = await waitForRun(test, id, (value) => value.status === 'completed');
      expect(after.result).toBe('Main heard 1 notification(s).');
      // Not resumed: no request of the agent, and it ends as it did.
      const requests = test.sim.journal.entries.slice(before);
      expect(requests.filter((entry) => entry.headers['x-delegate-agent'] !== undefined)).toEqual(
        [],
      );
      expect(after.agents.find((agent) => agent.agentId === worker.agentId)?.status).toBe(
        'completed',
      );
    });

    it('cancels a queued run before it starts', async () => {
      const local = await startTestServer({
        policy: scenarioPolicy(gates),
        config: { maxConcurrentRuns: 1 },
      });
      try {
        const busy = await json<{ id: string }>(
          await local.api('/v1/runs', { json: { prompt: 'scenario:hold' } }),
        );
        await waitForRun(local, busy.id, (run) => run.status === 'running');
        const waiting = await json<{ id: string }>(
          await local.api('/v1/runs', { json: { prompt: 'scenario:hello never' } }),
        );
        const response = await local.api(`/v1/runs/${waiting.id}/cancel`, { method: 'POST' });
        expect((await json<{ status: string }>(response)).status).toBe('cancelled');
        const other = await json<{ id: string }>(
          await local.api('/v1/runs', { json: { prompt: 'scenario:hello task two' } }),
        );
        const cancelled = await local.api(`/v1/runs/${other.id}/cancel`, { method: 'POST' });
        expect((await json<{ status: string }>(cancelled)).status).toBe('cancelled');
        gates.open('hold');
        await waitForRun(local, busy.id, ended);
        const run = await waitForRun(local, waiting.id, ended);
        expect(run.status).toBe('cancelled');
        expect(run.agents).toEqual([]);
        expect(
          local.sim.journal.entries.some((entry) =>
            JSON.stringify(entry.body).includes('hello never'),
          ),
        ).toBe(false);

        // Resumed, or sent a message, it runs its task first: the model was never given it.
        const resumed = await local.api(`/v1/runs/${waiting.id}/resume`, { method: 'POST' });
        expect(resumed.status).toBe(202);
        const done = await waitForRun(local, waiting.id, ended);
        expect(done.status).toBe('completed');
        expect(done.result).toBe('Hello from the model.');
        const first = local.sim.journal.entries.find((entry) =>
          JSON.stringify(entry.body).includes('hello never'),
        );
        expect(JSON.stringify(first?.body)).not.toContain('previous turn was interrupted');

        const messaged = await local.api(`/v1/runs/${other.id}/messages`, {
          json: { text: 'and in French' },
        });
        expect(messaged.status).toBe(202);
        expect((await waitForRun(local, other.id, ended)).status).toBe('completed');
        const sent = local.sim.journal.entries.find((entry) =>
          JSON.stringify(entry.body).includes('and in French'),
        );
        expect(JSON.stringify(sent?.body)).toMatch(/scenario:hello task two\\n\\nand in French/);
      } finally {
        await local.close();
      }
    });

    it('refuses to resume a completed run and answers 404 for unknown runs', async () => {
      const id = await start({ prompt: 'scenario:hello' });
      await waitForRun(test, id, ended);
      const response = await test.api(`/v1/runs/${id}/resume`, { method: 'POST' });
      expect(response.status).toBe(409);
      expect((await json<ApiError>(response)).error.message).toMatch(/messages/);
      expect(
        (await test.api('/v1/runs/run_000000000000000000000000/resume', { method: 'POST' })).status,
      ).toBe(404);
      expect(
        (await test.api('/v1/runs/run_000000000000000000000000/cancel', { method: 'POST' })).status,
      ).toBe(404);
    });
  });

  describe('agent actions', () => {
    it('moves a running foreground agent to the background', async () => {
      const id = await start({ prompt: 'scenario:fg' });
      const running = await waitForRun(test, id, (run) =>
        run.agents.some((agent) => agent.mode === 'foreground' && agent.status === 'running'),
      );
      const agent = running.agents.find((item) => item.mode === 'foreground');
      expect(
        (await test.api(`/v1/runs/${id}/agents/main/background`, { method: 'POST' })).status,
      ).toBe(409);
      const response = await test.api(`/v1/runs/${id}/agents/${agent!.agentId}/background`, {
        method: 'POST',
      });
      expect(response.status).toBe(200);
      expect((await json<{ status: string }>(response)).status).toBe('backgrounded');
      await waitForRun(
        test,
        id,
        (run) => run.agents.find((item) => item.agentId === agent!.agentId)?.backgrounded === true,
      );
      gates.open('fg');
      const run = await waitForRun(test, id, ended);
      expect(run.result).toBe('The moved agent reported back.');
      expect(
        (await test.api(`/v1/runs/${id}/agents/${agent!.agentId}/background`, { method: 'POST' }))
          .status,
      ).toBe(409);
    });

    it('cancels one background agent while the run goes on', async () => {
      const id = await start({ prompt: 'scenario:bg' });
      const running = await waitForRun(test, id, (run) =>
        run.agents.some(
          (agent) => agent.description === 'held background work' && agent.status === 'running',
        ),
      );
      const held = running.agents.find((agent) => agent.description === 'held background work');
      // The task list is stored while the run works, not only when it ends.
      const tasks = await waitForRun(test, id, (run) =>
        run.tasks.some((task) => task.agentId === held?.agentId && task.status === 'running'),
      );
      expect(tasks.tasks.find((task) => task.agentId === held!.agentId)).toMatchObject({
        type: 'local_agent',
        backgrounded: true,
      });
      expect(
        (await test.api(`/v1/runs/${id}/agents/anobody/cancel`, { method: 'POST' })).status,
      ).toBe(404);
      const response = await test.api(`/v1/runs/${id}/agents/${held!.agentId}/cancel`, {
        method: 'POST',
      });
      expect(response.status).toBe(202);
      const run = await waitForRun(test, id, ended);
      expect(run.status).toBe('completed');
      expect(run.result).toBe('Main saw the background agents end.');
      const states = Object.fromEntries(
        run.agents.map((agent) => [agent.description, agent.status]),
      );
      expect(states['held background work']).toBe('cancelled');
      expect(states['quick background work']).toBe('completed');
      expect(
        (await test.api(`/v1/runs/${id}/agents/${held!.agentId}/cancel`, { method: 'POST' }))
          .status,
      ).toBe(409);
    });
  });

  describe('GET /v1/runs/:id/transcript', () => {
    it('serves the main and a sub-agent transcript as JSONL and refuses traversal', async () => {
      const id = await start({ prompt: 'scenario:bg' });
      gates.open('bg');
      const run = await waitForRun(test, id, ended);
      const main = await test.api(`/v1/runs/${id}/transcript`);
      expect(main.status).toBe(200);
      expect(main.headers.get('content-type')).toMatch(/x-ndjson/);
      const lines = (await main.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.some((line) => JSON.stringify(line).includes('scenario:bg'))).toBe(true);
      const sub = run.agents.find((agent) => agent.agentId !== 'main');
      const subText = await (
        await test.api(`/v1/runs/${id}/transcript?agent=${sub!.agentId}`)
      ).text();
      expect(subText).toContain('scenario:bg');
      for (const agent of ['../../../etc/passwd', '..', 'a/b', '%2e%2e']) {
        const response = await test.api(
          `/v1/runs/${id}/transcript?agent=${encodeURIComponent(agent)}`,
        );
        expect(response.status, agent).toBe(400);
        expect((await json<ApiError>(response)).error.field).toBe('agent');
      }
      expect((await test.api(`/v1/runs/${id}/transcript?agent=anobody`)).status).toBe(404);
      // A transcript file swapped for a link to a file outside the transcript folder is not served.
      const file = join(test.dataDir, 'transcripts', id, 'agents', `${sub!.agentId}.jsonl`);
      const secret = join(test.root, 'outside-secret.txt');
      await writeFile(secret, 'not for clients');
      await rm(file);
      await symlink(secret, file);
      const linked = await test.api(`/v1/runs/${id}/transcript?agent=${sub!.agentId}`);
      expect(linked.status).toBe(400);
      expect(await linked.text()).not.toContain('not for clients');
      expect((await test.api('/v1/runs/run_000000000000000000000000/transcript')).status).toBe(404);
    });
  });

  describe('GET /v1/agents', () => {
    it('lists effective definitions with sources and diagnostics', async () => {
      const response = await test.api('/v1/agents');
      expect(response.status).toBe(200);
      const body = await json<AgentsBody>(response);
      const reviewer = body.agents.find((agent) => agent.agentType === 'reviewer');
      expect(reviewer).toMatchObject({ source: 'projectSettings', active: true, color: 'purple' });
      expect(
        body.agents.some((agent) => agent.source === 'built-in' && agent.agentType === 'Explore'),
      ).toBe(true);
      expect(body.diagnostics.some((diagnostic) => diagnostic.filePath.endsWith('broken.md'))).toBe(
        true,
      );
      const plans = body.agents.filter((agent) => agent.agentType === 'Plan');
      expect(plans.map((agent) => [agent.source, agent.active, agent.overriddenBy]).sort()).toEqual(
        [
          ['built-in', false, 'projectSettings'],
          ['projectSettings', true, null],
        ],
      );
      expect(
        body.diagnostics.some((diagnostic) => /replaces the built-in/.test(diagnostic.reason)),
      ).toBe(true);
      const sub = await json<AgentsBody>(await test.api('/v1/agents?workspace=sub'));
      expect(sub.workspace).toBe(join(test.workspace, 'sub'));
      const outside = await test.api('/v1/agents?workspace=../');
      expect(outside.status).toBe(400);
      expect((await json<ApiError>(outside)).error.field).toBe('workspace');
    });
  });

  describe('health', () => {
    it('answers /healthz and /readyz without a token', async () => {
      const health = await fetch(`${test.server.url}/healthz`);
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`${test.server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ok', checks: { store: 'ok', queue: 'ok' } });
    });
  });
});
