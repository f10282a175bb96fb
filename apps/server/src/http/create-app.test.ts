import { script } from '@delegate/api-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type TestServer,
  readSse,
  startTestServer,
  waitForRun,
} from '../__fixtures__/test-server.js';

describe('smoke', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer({ policy: script(['Hello from the model.']) });
  });
  afterAll(() => test.close());

  it('runs a prompt to completion and streams its events', async () => {
    const created = await test.api('/v1/runs', { json: { prompt: 'Say hello' } });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const run = await waitForRun(test, id, (value) => value.status === 'completed');
    expect(run.result).toBe('Hello from the model.');
    const events = await readSse(await test.api(`/v1/runs/${id}/events`));
    console.log(JSON.stringify(run, null, 1).slice(0, 2000));
    console.log(events.events.map((event) => `${event.id} ${event.event}`));
  });
});
