import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadServerToken } from '../config/server-token.js';
import type { ApiRun } from '../__fixtures__/api-types.js';
import { sampleRun } from '../store/run-store-contract.js';
import { Gates, scenarioPolicy } from '../__fixtures__/scenario-policy.js';
import {
  TEST_API_KEY,
  TEST_TOKEN,
  type TestServer,
  startTestServer,
  waitForRun,
} from '../__fixtures__/test-server.js';

const ENDED = ['completed', 'failed', 'cancelled', 'interrupted'];

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('security', () => {
  const gates = new Gates();
  let test: TestServer;
  let runId: string;

  beforeAll(async () => {
    test = await startTestServer({ policy: scenarioPolicy(gates) });
    const created = await test.api('/v1/runs', { json: { prompt: 'scenario:hello' } });
    runId = ((await created.json()) as { id: string }).id;
    await waitForRun(test, runId, (run) => ENDED.includes(run.status));
  });
  afterEach(() => gates.reset());
  afterAll(() => test.close());

  const wrongTokens: [string, Record<string, string>][] = [
    ['no header', {}],
    [
      'a wrong token of the same length',
      { authorization: `Bearer ${'x'.repeat(TEST_TOKEN.length)}` },
    ],
    ['a token of the wrong length', { authorization: `Bearer ${TEST_TOKEN}extra` }],
    ['a prefix of the token', { authorization: `Bearer ${TEST_TOKEN.slice(0, 10)}` }],
    [
      'another scheme',
      { authorization: `Basic ${Buffer.from(`user:${TEST_TOKEN}`).toString('base64')}` },
    ],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ];

  it.each(wrongTokens)(
    'answers 401 to %s, the same for existing and unknown runs',
    async (_name, headers) => {
      const bodies: string[] = [];
      for (const path of [
        `/v1/runs/${runId}`,
        '/v1/runs/run_000000000000000000000000',
        '/v1/runs',
        '/v1/nothing-here',
      ]) {
        const response = await fetch(`${test.server.url}${path}`, { headers });
        expect(response.status, path).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
        bodies.push(await response.text());
      }
      expect(new Set(bodies).size).toBe(1);
    },
  );

  it('requires the token on every /v1 route of the OpenAPI document', async () => {
    const document = (await (await test.api('/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const paths = Object.entries(document.paths).filter(([path]) => path.startsWith('/v1'));
    expect(paths.length).toBeGreaterThanOrEqual(10);
    for (const [path, methods] of paths) {
      for (const method of Object.keys(methods)) {
        const url = path.replace('{id}', runId).replace('{agentId}', 'main');
        const response = await fetch(`${test.server.url}${url}`, { method: method.toUpperCase() });
        expect(response.status, `${method} ${path}`).toBe(401);
      }
    }
    expect((await fetch(`${test.server.url}/v1/openapi.json`)).status).toBe(401);
  });

  it('limits requests per token with 429 and retry-after', async () => {
    const local = await startTestServer({
      policy: scenarioPolicy(gates),
      config: { rateLimitPerMinute: 3 },
    });
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let index = 0; index < 5; index++) {
        const response = await local.api('/v1/runs');
        statuses.push(response.status);
        if (response.status === 429) retryAfter = response.headers.get('retry-after');
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(Number(retryAfter)).toBeGreaterThan(0);
    } finally {
      await local.close();
    }
  });

  it('slows down an address that keeps failing authentication', async () => {
    const local = await startTestServer({
      policy: scenarioPolicy(gates),
      config: { authFailuresPerMinute: 2 },
    });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 4; index++)
        statuses.push(
          (
            await fetch(`${local.server.url}/v1/runs`, {
              headers: { authorization: 'Bearer wrong' },
            })
          ).status,
        );
      expect(statuses).toEqual([401, 401, 429, 429]);
      // The right token still works from the same address.
      expect((await local.api('/v1/runs')).status).toBe(200);
    } finally {
      await local.close();
    }
  });

  it('sends no CORS headers by default and only to allowed origins when configured', async () => {
    const plain = await test.api('/v1/runs', { headers: { origin: 'https://evil.example' } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const local = await startTestServer({
      policy: scenarioPolicy(gates),
      config: { corsOrigins: ['https://app.example'] },
    });
    try {
      const allowed = await local.api('/v1/runs', { headers: { origin: 'https://app.example' } });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const preflight = await fetch(`${local.server.url}/v1/runs`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      const other = await local.api('/v1/runs', { headers: { origin: 'https://evil.example' } });
      expect(other.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
    } finally {
      await local.close();
    }
  });

  it('keeps the API key and the token out of the event log, transcripts, tool environments and logs', async () => {
    const created = await test.api('/v1/runs', {
      json: {
        prompt: `scenario:bash and my key is ${TEST_API_KEY}`,
        permissionMode: 'bypassPermissions',
        // Options are shown back too: a secret in one is shown redacted.
        allowedTools: [`Bash(echo ${TEST_TOKEN})`],
      },
    });
    const id = ((await created.json()) as { id: string }).id;
    const run = await waitForRun(test, id, (value) => ENDED.includes(value.status));
    expect(run.status).toBe('completed');
    // The Bash tool ran `env`: the result shows the environment the run sees.
    expect(run.result).toMatch(/Environment: .*PATH=/s);
    expect(run.result).not.toContain(TEST_API_KEY);
    expect(run.prompt).toContain('[REDACTED]');
    const events = await (await test.api(`/v1/runs/${id}/events`)).text();
    const transcript = await (await test.api(`/v1/runs/${id}/transcript`)).text();
    const listed = await (await test.api('/v1/runs')).text();
    expect(JSON.stringify(run.options)).toContain('[REDACTED]');
    for (const text of [events, transcript, JSON.stringify(run), listed, test.logs.join('')]) {
      expect(text).not.toContain(TEST_API_KEY);
      expect(text).not.toContain(TEST_TOKEN);
    }
    for (const file of await filesUnder(join(test.dataDir, 'transcripts'))) {
      const content = await readFile(file, 'utf8');
      expect(content, file).not.toContain(TEST_TOKEN);
      expect(content, file).not.toContain(TEST_API_KEY);
      expect(content, file).not.toMatch(/ANTHROPIC_API_KEY=|DELEGATE_SERVER_TOKEN=/);
    }
  });

  it('shows every run option with the API key and the token redacted, also for a run stored before options were redacted', async () => {
    // A server of its own: the run stored as before leaves the secrets in its database.
    const local = await startTestServer({ policy: scenarioPolicy(new Gates()) });
    try {
      const created = await local.api('/v1/runs', {
        json: {
          prompt: 'scenario:hello',
          model: `claude-${TEST_API_KEY}`,
          disallowedTools: [`Bash(curl ${TEST_TOKEN})`],
        },
      });
      expect(created.status).toBe(201);
      const id = ((await created.json()) as { id: string }).id;
      await waitForRun(local, id, (value) => ENDED.includes(value.status));
      // Stored redacted, as the prompt is: the database never holds them.
      expect((await local.server.store.getRun(id))?.options).toEqual({
        model: 'claude-[REDACTED]',
        disallowedTools: ['Bash(curl [REDACTED])'],
      });
      // As a store written by an earlier version holds it: the options as they were sent.
      const old = await local.server.store.createRun({
        ...sampleRun(),
        status: 'completed',
        pending: null,
        workspace: local.workspace,
        options: { model: TEST_API_KEY, allowedTools: [`Read(${TEST_TOKEN})`] },
      });
      const shown = [
        await (await local.api(`/v1/runs/${id}`)).json(),
        await (await local.api(`/v1/runs/${old.id}`)).json(),
      ] as ApiRun[];
      expect(shown.map((run) => run.options)).toEqual([
        { model: 'claude-[REDACTED]', disallowedTools: ['Bash(curl [REDACTED])'] },
        { model: '[REDACTED]', allowedTools: ['Read([REDACTED])'] },
      ]);
      const listed = await (await local.api('/v1/runs')).text();
      expect(listed).toContain('claude-[REDACTED]');
      expect(listed).toContain('Read([REDACTED])');
      for (const text of [JSON.stringify(shown), listed]) {
        expect(text).not.toContain(TEST_API_KEY);
        expect(text).not.toContain(TEST_TOKEN);
      }
    } finally {
      await local.close();
    }
  });

  it('keeps the API key and the token that a file of the workspace holds out of what the model sees and every copy of the transcripts', async () => {
    await writeFile(
      join(test.workspace, 'notes.txt'),
      `ANTHROPIC_API_KEY=${TEST_API_KEY}\nDELEGATE_SERVER_TOKEN=${TEST_TOKEN}\n`,
    );
    const created = await test.api('/v1/runs', {
      json: { prompt: 'scenario:read-notes', permissionMode: 'bypassPermissions' },
    });
    const id = ((await created.json()) as { id: string }).id;
    const run = await waitForRun(test, id, (value) => ENDED.includes(value.status));
    expect(run.status).toBe('completed');
    expect(run.result).toContain('ANTHROPIC_API_KEY=[REDACTED]');
    expect(run.result).toContain('DELEGATE_SERVER_TOKEN=[REDACTED]');
    const seenByModel = JSON.stringify(test.sim.journal.entries.map((entry) => entry.body));
    const files = await filesUnder(join(test.dataDir, 'transcripts'));
    expect(files.length).toBeGreaterThan(0);
    // The store keeps a copy of each transcript (other workers restore from it).
    const storeFiles = await filesUnder(test.dataDir);
    for (const text of [
      seenByModel,
      ...(await Promise.all([...files, ...storeFiles].map((file) => readFile(file, 'latin1')))),
    ]) {
      expect(text).not.toContain(TEST_API_KEY);
      expect(text).not.toContain(TEST_TOKEN);
    }
  });

  it('redacts the API key and the token that a workspace agent file quotes, in /v1/agents and in what a run writes down', async () => {
    // A run with Bash could write such a file from the server's environment.
    const folder = join(test.workspace, '.claude', 'agents');
    await mkdir(folder, { recursive: true });
    await writeFile(
      join(folder, 'leaky.md'),
      `---\nname: leaky-${TEST_TOKEN}\ndescription: Uses ANTHROPIC_API_KEY=${TEST_API_KEY}\ntools: Read, Bash(${TEST_TOKEN})\n---\nBody.`,
    );
    try {
      const listed = await (await test.api('/v1/agents')).text();
      expect(listed).toContain('ANTHROPIC_API_KEY=[REDACTED]');
      expect(listed).not.toContain(TEST_API_KEY);
      expect(listed).not.toContain(TEST_TOKEN);
      const created = await test.api('/v1/runs', { json: { prompt: 'scenario:hello' } });
      const id = ((await created.json()) as { id: string }).id;
      expect((await waitForRun(test, id, (run) => ENDED.includes(run.status))).status).toBe(
        'completed',
      );
      const files = await filesUnder(test.dataDir);
      for (const text of await Promise.all(files.map((file) => readFile(file, 'latin1')))) {
        expect(text).not.toContain(TEST_API_KEY);
        expect(text).not.toContain(TEST_TOKEN);
      }
    } finally {
      await rm(join(test.workspace, '.claude'), { recursive: true, force: true });
    }
  });

  it('serves the dashboard with a strict content security policy', async () => {
    const page = await fetch(`${test.server.url}/`);
    expect(page.status).toBe(200);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain('unsafe');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('logs each request as JSON with a request id', async () => {
    const response = await test.api('/v1/runs?limit=1');
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    const line = test.logs
      .flatMap((chunk) => chunk.split('\n'))
      .filter(Boolean)
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.requestId === requestId);
    expect(line).toMatchObject({ msg: 'request', method: 'GET', path: '/v1/runs', status: 200 });
  });
});

describe('loadServerToken', () => {
  it('generates a token once, stores it with mode 0600, and reads the same one back', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dataDir = await mkdtemp(join(tmpdir(), 'delegate-token-'));
    try {
      const first = await loadServerToken({ configured: undefined, dataDir });
      expect(first.source).toBe('generated');
      expect(first.token).toMatch(/^dst_[A-Za-z0-9_-]{43}$/);
      expect((await stat(first.path!)).mode & 0o777).toBe(0o600);
      const second = await loadServerToken({ configured: undefined, dataDir });
      expect(second).toEqual({ token: first.token, source: 'file', path: first.path });
      const configured = await loadServerToken({ configured: 'a-configured-token-123', dataDir });
      expect(configured).toEqual({ token: 'a-configured-token-123', source: 'config' });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
