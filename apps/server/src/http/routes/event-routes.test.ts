import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApiError, type ApiEvent, json } from '../../__fixtures__/api-types.js';
import { RunEventView } from '../schemas.js';
import { Gates, scenarioPolicy } from '../../__fixtures__/scenario-policy.js';
import {
  type TestServer,
  readSse,
  startTestServer,
  waitForRun,
} from '../../__fixtures__/test-server.js';

const ENDED = ['completed', 'failed', 'cancelled', 'interrupted'];

describe('GET /v1/runs/:id/events', () => {
  const gates = new Gates();
  let test: TestServer;

  beforeAll(async () => {
    test = await startTestServer({ policy: scenarioPolicy(gates), config: { keepAliveMs: 40 } });
  });
  afterEach(() => gates.reset());
  afterAll(() => test.close());

  async function start(prompt: string): Promise<string> {
    const response = await test.api('/v1/runs', { json: { prompt } });
    return ((await response.json()) as { id: string }).id;
  }

  async function finishedRun(): Promise<{
    id: string;
    all: { id: number; event: string; data: ApiEvent }[];
  }> {
    const id = await start('scenario:bg');
    gates.open('bg');
    await waitForRun(test, id, (run) => ENDED.includes(run.status));
    const { events } = await readSse(await test.api(`/v1/runs/${id}/events`));
    return { id, all: events };
  }

  it('sends every event in order with an id, each a valid event, and ends after the final status', async () => {
    const id = await start('scenario:bg');
    const response = await test.api(`/v1/runs/${id}/events`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    gates.open('bg');
    const { events } = await readSse(response);
    expect(events.map((event) => event.id)).toEqual(events.map((_, index) => index + 1));
    for (const event of events) {
      expect(event.event).toBe(event.data.type);
      expect(event.data.seq).toBe(event.id);
      expect(event.data.data.type).toBe(event.data.type);
      expect(() => RunEventView.parse(event.data)).not.toThrow();
    }
    expect(events[0]!.data.data).toEqual({ type: 'run.status', status: 'queued' });
    const last = events.at(-1)!;
    expect(last.data.data).toMatchObject({ type: 'run.status', status: 'completed' });
    const types = events.map((event) => event.event);
    expect(types.filter((type) => type === 'agent.started')).toHaveLength(3);
    expect(types.indexOf('agent.completed')).toBeGreaterThan(types.indexOf('agent.started'));
  });

  it('resumes after a dropped connection from Last-Event-ID with no gap and no duplicate', async () => {
    const id = await start('scenario:bg');
    // Drop the connection after a few events while the run is still working.
    const first = await readSse(await test.api(`/v1/runs/${id}/events`), {
      stop: (event) => event.event === 'agent.started' && event.data.agentId !== 'main',
    });
    const lastSeen = first.events.at(-1)!.id;
    gates.open('bg');
    const second = await readSse(
      await test.api(`/v1/runs/${id}/events`, { headers: { 'last-event-id': String(lastSeen) } }),
    );
    const ids = [...first.events, ...second.events].map((event) => event.id);
    expect(ids).toEqual(ids.map((_, index) => index + 1));
    expect(second.events[0]!.id).toBe(lastSeen + 1);
    expect(second.events.at(-1)!.data.data).toMatchObject({ status: 'completed' });
  });

  it('replays from ?after= and answers 204 when a finished run has nothing after it', async () => {
    const { id, all } = await finishedRun();
    const after = await readSse(await test.api(`/v1/runs/${id}/events?after=3`));
    expect(after.events.map((event) => event.id)).toEqual(all.slice(3).map((event) => event.id));
    expect(after.events.map((event) => event.data)).toEqual(
      all.slice(3).map((event) => event.data),
    );
    const none = await test.api(`/v1/runs/${id}/events`, {
      headers: { 'last-event-id': String(all.length) },
    });
    expect(none.status).toBe(204);
  });

  it('ends a stream opened past the last event of an active run when the run ends', async () => {
    const id = await start('scenario:bg');
    await waitForRun(test, id, (run) => run.status === 'running');
    const beyond = readSse(await test.api(`/v1/runs/${id}/events?after=100000`));
    gates.open('bg');
    await waitForRun(test, id, (run) => ENDED.includes(run.status));
    // It sends nothing (every event is before its position) and closes with the run.
    const outcome = await Promise.race([
      beyond.then(({ events }) => events.length),
      new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 5_000)),
    ]);
    expect(outcome).toBe(0);
  });

  it('delivers every event to 50 concurrent subscribers', async () => {
    const id = await start('scenario:bg');
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => test.api(`/v1/runs/${id}/events`)),
    );
    gates.open('bg');
    const results = await Promise.all(responses.map((response) => readSse(response)));
    const { events: reference } = await readSse(await test.api(`/v1/runs/${id}/events`));
    expect(reference.at(-1)!.data.data).toMatchObject({ status: 'completed' });
    for (const result of results) {
      expect(result.events.map((event) => event.data)).toEqual(
        reference.map((event) => event.data),
      );
    }
  });

  it('sends keep-alive comments while nothing happens', async () => {
    const id = await start('scenario:hold');
    await waitForRun(test, id, (run) => run.status === 'running');
    const response = await test.api(`/v1/runs/${id}/events`);
    const reading = readSse(response);
    await new Promise((resolve) => setTimeout(resolve, 300));
    gates.open('hold');
    const { comments, events } = await reading;
    expect(comments).toBeGreaterThan(0);
    expect(events.at(-1)!.data.data).toMatchObject({ status: 'completed' });
  });

  it('refuses a malformed Last-Event-ID and unknown runs', async () => {
    const { id } = await finishedRun();
    const bad = await test.api(`/v1/runs/${id}/events`, { headers: { 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
    expect((await json<ApiError>(bad)).error.field).toBe('last-event-id');
    // ?after= takes what Last-Event-ID takes: decimal digits only (no empty value read as 0).
    for (const after of ['-1', '', '0x2', '1e1', '0b11', '1.5']) {
      const response = await test.api(`/v1/runs/${id}/events?after=${after}`);
      expect(response.status, `after=${after}`).toBe(400);
      expect((await json<ApiError>(response)).error.field).toBe('after');
    }
    expect((await test.api('/v1/runs/run_000000000000000000000000/events')).status).toBe(404);
  });
});
