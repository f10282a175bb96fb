import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gates, scenarioPolicy } from '../__fixtures__/scenario-policy.js';
import { createTestDatabase, probeTestServices } from '../__fixtures__/services.js';
import { type TestServer, startTestServer, waitForRun } from '../__fixtures__/test-server.js';

const services = await probeTestServices();

// PostgreSQL on loopback trusts the tests' connections, so any password works; this one has
// characters a URL must percent-encode, so the URL holds `p%40ss%3A…` and not the password.
const PASSWORD = 'p@ss:w0rd/secret!0123';

describe.skipIf(!services.postgres)('a store password that the URL percent-encodes', () => {
  let test: TestServer;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let url: string;
  const before = process.env.DELEGATE_STORE_URL;

  beforeAll(async () => {
    database = await createTestDatabase();
    const withPassword = new URL(database.url);
    withPassword.password = PASSWORD;
    url = withPassword.toString();
    expect(url).not.toContain(PASSWORD);
    // The operator passes the URL in the environment, as the README shows.
    process.env.DELEGATE_STORE_URL = url;
    test = await startTestServer({ policy: scenarioPolicy(new Gates()), config: { store: url } });
  });
  afterAll(async () => {
    if (before === undefined) delete process.env.DELEGATE_STORE_URL;
    else process.env.DELEGATE_STORE_URL = before;
    await test?.close();
    await database?.drop();
  });

  it('is kept out of the environment of commands, the events, the run and the logs, in either spelling', async () => {
    const created = await test.api('/v1/runs', {
      json: { prompt: 'scenario:bash', permissionMode: 'bypassPermissions' },
    });
    const id = ((await created.json()) as { id: string }).id;
    const run = await waitForRun(
      test,
      id,
      (value) => value.status !== 'queued' && value.status !== 'running',
    );
    expect(run.status).toBe('completed');
    // The Bash tool ran `env`: the result shows the environment the run sees.
    expect(run.result).toMatch(/Environment: .*PATH=/s);
    expect(run.result).not.toContain('DELEGATE_STORE_URL=');
    const encoded = new URL(url).password;
    const events = await (await test.api(`/v1/runs/${id}/events`)).text();
    const transcript = await (await test.api(`/v1/runs/${id}/transcript`)).text();
    for (const text of [events, transcript, JSON.stringify(run), test.logs.join('')]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(encoded);
    }
  });
});

describe.skipIf(!services.postgres)('a store password too short to redact', () => {
  it('is named in a warning at start, without the password, and the server still serves', async () => {
    const database = await createTestDatabase();
    const withPassword = new URL(database.url);
    withPassword.password = 'pw7x';
    const test = await startTestServer({
      policy: scenarioPolicy(new Gates()),
      config: { store: withPassword.toString() },
    }).catch(async (error: unknown) => {
      await database.drop();
      throw error;
    });
    try {
      const logs = test.logs.join('');
      expect(logs).toContain("the store URL's password is under 8 characters");
      expect(logs).not.toContain('pw7x');
      expect((await test.api('/v1/runs')).status).toBe(200);
    } finally {
      await test.close();
      await database.drop();
    }
  });
});
