import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from './rules.js';
import { startSim, type Sim, type SimOptions } from './start-sim.js';

const MODEL = 'claude-sonnet-5';
let sim: Sim | undefined;

async function open(options: SimOptions, maxRetries = 0): Promise<{ sim: Sim; client: Anthropic }> {
  sim = await startSim({ policy: () => 'done', ...options });
  return { sim, client: new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries }) };
}

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const ask = (client: Anthropic, content = 'hi') =>
  client.messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content }] });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('fault injection', () => {
  it('maps each HTTP fault to the SDK error class', async () => {
    const { client, sim } = await open({
      faults: [
        { kind: 'rate_limit', onRequests: [1] },
        { kind: 'overloaded', onRequests: [2] },
        { kind: 'api_error', onRequests: [3] },
        { kind: 'gateway_timeout', onRequests: [4] },
      ],
    });
    const rateLimited = await failure(ask(client));
    expect(rateLimited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((rateLimited as InstanceType<typeof Anthropic.APIError>).type).toBe('rate_limit_error');
    expect(
      (rateLimited as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after'),
    ).not.toBeNull();
    const overloaded = await failure(ask(client));
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).type).toBe('overloaded_error');
    const internal = await failure(ask(client));
    expect(internal).toBeInstanceOf(Anthropic.InternalServerError);
    expect((internal as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');
    const timeout = await failure(ask(client));
    expect((timeout as InstanceType<typeof Anthropic.APIError>).status).toBe(504);
    expect(sim.journal.entries.map((entry) => entry.fault)).toEqual([
      'rate_limit',
      'overloaded',
      'api_error',
      'gateway_timeout',
    ]);
    expect(sim.journal.entries.map((entry) => entry.status)).toEqual([429, 529, 500, 504]);
  });

  it('lets the SDK retry 429 and 529, visible in the journal with x-stainless-retry-count', async () => {
    const { client, sim } = await open(
      {
        faults: [
          { kind: 'rate_limit', times: 1 },
          { kind: 'overloaded', times: 1 },
        ],
      },
      3,
    );
    const message = await ask(client);
    expect(message.content).toEqual([{ type: 'text', text: 'done', citations: null }]);
    expect(sim.journal.entries.map((entry) => entry.headers['x-stainless-retry-count'])).toEqual([
      '0',
      '1',
      '2',
    ]);
    expect(sim.journal.entries.map((entry) => entry.status)).toEqual([429, 529, 200]);
  });

  it('sends an error event mid-stream that the SDK raises', async () => {
    const { client, sim } = await open({
      policy: () => 'one two three four five six',
      faults: [{ kind: 'stream_error', afterEvents: 4 }],
    });
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const error = await failure(stream.finalMessage());
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('overloaded_error');
    expect(sim.journal.last()?.fault).toBe('stream_error');
    expect(sim.journal.last()?.status).toBe(200);
  });

  it('resets the connection mid-stream', async () => {
    const { client, sim } = await open({
      policy: () => 'one two three four five',
      faults: [{ kind: 'connection_reset', afterEvents: 3 }],
    });
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const received: string[] = [];
    stream.on('streamEvent', (event) => received.push(event.type));
    await failure(stream.finalMessage());
    expect(received).toContain('message_start');
    expect(received).not.toContain('message_stop');
    expect(sim.journal.last()?.fault).toBe('connection_reset');
  });

  it('resets before the response when afterEvents is 0, which the SDK retries as a connection error', async () => {
    const { client, sim } = await open(
      { faults: [{ kind: 'connection_reset', afterEvents: 0, times: 1 }] },
      1,
    );
    const message = await ask(client);
    expect(message.type).toBe('message');
    expect(sim.journal.entries.map((entry) => entry.fault)).toEqual([
      'connection_reset',
      undefined,
    ]);
  });

  it('delays the first byte and still answers', async () => {
    const { client, sim } = await open({ faults: [{ kind: 'slow_first_byte', delayMs: 20 }] });
    expect((await ask(client)).type).toBe('message');
    expect(sim.journal.last()?.fault).toBe('slow_first_byte');
  });

  it('applies a fault only to requests that match it', async () => {
    const { client, sim } = await open({
      faults: [{ kind: 'api_error', match: { lastUserText: 'flaky' } }],
    });
    expect((await ask(client, 'steady')).type).toBe('message');
    await failure(ask(client, 'a flaky one'));
    expect(sim.journal.entries.map((entry) => entry.status)).toEqual([200, 500]);
  });

  it('draws the same probabilistic faults whatever order the requests arrive in', async () => {
    const failed = async (order: number[]) => {
      const { client, sim } = await open({
        seed: 3,
        faults: [{ kind: 'api_error', probability: 0.3 }],
      });
      for (const index of order) await ask(client, `request ${index}`).catch(() => undefined);
      const names = sim.journal.entries
        .filter((entry) => entry.status === 500)
        .map((entry) => JSON.stringify(entry.body))
        .sort();
      await sim.close();
      return names;
    };
    const forward = Array.from({ length: 20 }, (_, index) => index);
    const failures = await failed(forward);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.length).toBeLessThan(20);
    expect(await failed([...forward].reverse())).toEqual(failures);
  });

  it('draws probabilistic faults deterministically from the seed', async () => {
    const pattern = async (seed: number) => {
      const { client, sim } = await open({
        seed,
        faults: [{ kind: 'api_error', probability: 0.5 }],
      });
      for (let index = 0; index < 12; index++) await ask(client).catch(() => undefined);
      const statuses = sim.journal.entries.map((entry) => entry.status);
      await sim.close();
      return statuses;
    };
    const first = await pattern(7);
    expect(first).toContain(200);
    expect(first).toContain(500);
    expect(await pattern(7)).toEqual(first);
  });

  it('lets a rule answer with a fault', async () => {
    const { client, sim } = await open({
      policy: rules([{ match: { lastUserText: 'busy' }, reply: { fault: 'overloaded' } }], {
        fallback: 'fine',
      }),
    });
    const error = await failure(ask(client, 'are you busy?'));
    expect((error as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect(sim.journal.last()?.fault).toBe('overloaded');
    expect((await ask(client, 'hello')).content).toEqual([
      { type: 'text', text: 'fine', citations: null },
    ]);
  });
});

/** Polls until `condition` holds; the test timeout is the hang guard. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** A grace period for events that should not come; it only lets a wrong server show itself. */
const GRACE_MS = 150;

describe('the stall fault', () => {
  it('stops a stream after afterEvents events and keeps the connection open until the client aborts', async () => {
    const { client, sim } = await open({
      policy: () => 'one two three four five six',
      faults: [{ kind: 'stall', afterEvents: 4, times: 1 }],
    });
    const controller = new AbortController();
    let abortedByUs = false;
    const received: string[] = [];
    const consume = (async () => {
      const stream = await client.messages.create(
        { model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream: true },
        { signal: controller.signal },
      );
      try {
        for await (const event of stream) received.push(event.type);
        return { ended: 'quietly', afterAbort: abortedByUs };
      } catch (error) {
        return { ended: (error as Error).name, afterAbort: abortedByUs };
      }
    })();
    const entry = () => sim.journal.entries[0];
    await until(() => entry()?.error?.type === 'stall');
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
    // Four SSE events were sent; the SDK does not pass the ping on.
    const sent = ['message_start', 'content_block_start', 'content_block_delta'];
    expect(received).toEqual(sent);
    abortedByUs = true;
    controller.abort();
    const outcome = await consume;
    // The iteration ended only because the client aborted, never because the server closed.
    expect(outcome.afterAbort).toBe(true);
    expect(received).toEqual(sent);
    expect(entry()).toMatchObject({ fault: 'stall', status: 200 });
    await until(() => entry()?.error?.message.includes('client closed') === true);
    expect(entry()?.error?.message).toContain('stopped after 4 of');
    // The server is not stuck: the next request (no longer stalled) is answered in full.
    expect((await ask(client)).content).toEqual([
      { type: 'text', text: 'one two three four five six', citations: null },
    ]);
  });

  it('with afterEvents 0 sends the headers and no event at all', async () => {
    const { client, sim } = await open({ faults: [{ kind: 'stall', afterEvents: 0 }] });
    const controller = new AbortController();
    const stream = await client.messages.create(
      { model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream: true },
      { signal: controller.signal },
    );
    const received: string[] = [];
    const consume = (async () => {
      try {
        for await (const event of stream) received.push(event.type);
      } catch {
        // the abort below ends the iteration
      }
    })();
    await until(() => sim.journal.last()?.error?.type === 'stall');
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
    controller.abort();
    await consume;
    expect(received).toEqual([]);
    expect(sim.journal.last()?.status).toBe(200);
  });

  it('never starts a non-streamed response, and caches nothing, until the client aborts', async () => {
    const { client, sim } = await open({ faults: [{ kind: 'stall' }] });
    const controller = new AbortController();
    const answer = client.messages.create(
      {
        model: MODEL,
        max_tokens: 50,
        system: [
          { type: 'text', text: 'rules '.repeat(2000), cache_control: { type: 'ephemeral' } },
        ],
        messages: [{ role: 'user', content: 'hi' }],
      },
      { signal: controller.signal },
    );
    let settled = false;
    const outcome = answer.then(
      () => 'answered',
      (error: unknown) => (error as Error).name,
    );
    void outcome.then(() => (settled = true));
    await until(() => sim.journal.last()?.error?.type === 'stall');
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
    expect(settled).toBe(false);
    controller.abort();
    expect(await outcome).toBe('APIUserAbortError');
    expect(sim.journal.last()?.status).toBe(0);
    expect(sim.cache.size).toBe(0);
  });
});

/** A 100-token request with one user message. */
function toolRequest(content: string) {
  return { model: MODEL, max_tokens: 100, messages: [{ role: 'user' as const, content }] };
}

/** Streams `request`: the tool input JSON text sent, the stop reason, the block types started. */
async function streamToolJson(
  client: Anthropic,
  request: ReturnType<typeof toolRequest>,
): Promise<{ json: string; stopReason: string | null | undefined; started: string[] }> {
  let json = '';
  let stopReason: string | null | undefined;
  const started: string[] = [];
  for await (const event of await client.messages.create({ ...request, stream: true })) {
    if (event.type === 'content_block_start') started.push(event.content_block.type);
    if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
      json += event.delta.partial_json;
    if (event.type === 'message_delta') stopReason = event.delta.stop_reason;
  }
  return { json, stopReason, started };
}

describe('max_tokens inside a tool call', () => {
  it('streams the call cut where the tokens ran out, as the API does; a non-streamed answer drops it', async () => {
    const input = { path: 'big.txt', content: 'y'.repeat(2_000) };
    const { client } = await open({
      policy: () => [{ type: 'tool_use', name: 'Write', input }],
    });
    const request = toolRequest('write it');
    const { json, stopReason, started } = await streamToolJson(client, request);
    expect(started).toEqual(['tool_use']);
    expect(stopReason).toBe('max_tokens');
    expect(json.length).toBeGreaterThan(0);
    expect(JSON.stringify(input).startsWith(json)).toBe(true);
    expect(() => JSON.parse(json) as unknown).toThrow();
    const whole = await client.messages.create(request);
    expect(whole.stop_reason).toBe('max_tokens');
    expect(whole.content).toEqual([]);
  });
});

describe('a stream fault a policy answers with', () => {
  it('fails the stream as the fault says, not with an internal error of the simulator', async () => {
    const { client, sim } = await open({
      policy: () => ({
        fault: { kind: 'stream_error', afterEvents: 1, errorType: 'api_error', message: 'Boom' },
      }),
    });
    const stream = await client.messages.create({
      model: MODEL,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream) seen.push(event.type);
    })().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(seen).toEqual(['message_start']);
    expect(error).toMatchObject({ type: 'api_error', error: { error: { message: 'Boom' } } });
    expect(sim.journal.last()).toMatchObject({ status: 200, fault: 'stream_error' });
  });
});

describe('a tool call with raw input JSON', () => {
  it('streams the raw text, valid JSON or not; a non-streamed answer sends the input', async () => {
    const { client } = await open({
      policy: () => [
        { type: 'tool_use', name: 'Glob', input: { pattern: '*' }, rawInput: '{"pattern": "*",}' },
      ],
    });
    const request = toolRequest('list');
    const { json, stopReason } = await streamToolJson(client, request);
    expect(json).toBe('{"pattern": "*",}');
    expect(stopReason).toBe('tool_use');
    const whole = await client.messages.create(request);
    expect(whole.content).toMatchObject([{ type: 'tool_use', input: { pattern: '*' } }]);
  });
});
