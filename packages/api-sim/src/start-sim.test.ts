import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { rules } from './rules.js';
import { script } from './script.js';
import { startSim, type Sim, type SimOptions } from './start-sim.js';

const MODEL = 'claude-sonnet-5';
let sim: Sim | undefined;

async function open(options: SimOptions = {}): Promise<{ sim: Sim; client: Anthropic }> {
  sim = await startSim(options);
  return { sim, client: new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 }) };
}

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('startSim with the real SDK', () => {
  it('answers messages.create with the full Message and usage', async () => {
    const { client, sim } = await open({ policy: script(['Hello from the simulator.']) });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hi there' }],
    });
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.model).toBe(MODEL);
    expect(message.content).toEqual([
      { type: 'text', text: 'Hello from the simulator.', citations: null },
    ]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage.cache_read_input_tokens).toBe(0);
    const entry = sim.journal.last();
    expect(entry?.status).toBe(200);
    expect(entry?.auth).toBe('bearer');
    expect(entry?.headers['anthropic-version']).toBe('2026-10-21');
    expect(entry?.headers['x-stainless-retry-count']).toBe('0');
  });

  it('streams text through messages.stream and finalMessage()', async () => {
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(20).trim();
    const { client } = await open({ policy: script([long]) });
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 1000,
      messages: [{ role: 'user', content: 'Tell me a story' }],
    });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.join('')).toBe(long);
    expect(message.content).toEqual([{ type: 'text', text: long, citations: null }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBe(Math.ceil(Buffer.byteLength(long) / 4));
  });

  it('sends every SSE event with an event name, in the order the SDK expects', async () => {
    const { sim } = await open({ policy: script(['One two three']) });
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'test', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: 'go' }],
      }),
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const text = await response.text();
    const frames = text.split('\n\n').filter((frame) => frame.length > 0);
    const names = frames.map((frame) => /^event: (\S+)\ndata: /.exec(frame)?.[1]);
    expect(names.every((name) => name !== undefined)).toBe(true);
    expect(names[0]).toBe('message_start');
    expect(names).toContain('ping');
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    const start = JSON.parse(frames[0]?.split('data: ')[1] ?? '{}') as {
      message: { usage: Record<string, number> };
    };
    expect(start.message.usage.input_tokens).toBeGreaterThan(0);
    expect(sim.journal.last()?.auth).toBe('x-api-key');
  });

  it('streams tool_use input in several JSON chunks that the SDK reassembles', async () => {
    const input = {
      path: '/src/index.ts',
      pattern: 'export function',
      options: { limit: 10, caseSensitive: true },
    };
    const { client, sim } = await open({
      policy: script([
        [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', name: 'Grep', input },
        ],
      ]),
    });
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 500,
      tools: [
        {
          name: 'Grep',
          description: 'Search files',
          input_schema: { type: 'object', properties: {} },
        },
      ],
      messages: [{ role: 'user', content: 'Find exports' }],
    });
    const jsonChunks: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') {
        jsonChunks.push(event.delta.partial_json);
      }
    });
    const message = await stream.finalMessage();
    expect(jsonChunks.length).toBeGreaterThanOrEqual(3);
    expect(message.stop_reason).toBe('tool_use');
    const toolUse = message.content[1];
    expect(toolUse?.type).toBe('tool_use');
    if (toolUse?.type !== 'tool_use') return;
    expect(toolUse.input).toEqual(input);
    expect(toolUse.id).toMatch(/^toolu_/);
    expect(sim.journal.last()?.stopReason).toBe('tool_use');
  });

  it('runs a tool loop: a rule answers the tool result with a final text', async () => {
    const { client } = await open({
      policy: rules([
        {
          match: { toolResult: 'Read' },
          reply: (request) => `The file says: ${request.toolResults[0]?.content}`,
        },
        {
          match: { lastUserText: 'read' },
          reply: [{ type: 'tool_use', name: 'Read', input: { path: 'a.txt' } }],
        },
      ]),
    });
    const tools = [
      {
        name: 'Read',
        description: 'Read a file',
        input_schema: { type: 'object' as const, properties: {} },
      },
    ];
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 200,
      tools,
      messages: [{ role: 'user', content: 'please read a.txt' }],
    });
    const call = first.content.find((block) => block.type === 'tool_use');
    expect(call?.type).toBe('tool_use');
    if (call?.type !== 'tool_use') return;
    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 200,
      tools,
      messages: [
        { role: 'user', content: 'please read a.txt' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: call.id, content: 'hello world' }],
        },
      ],
    });
    expect(second.content).toEqual([
      { type: 'text', text: 'The file says: hello world', citations: null },
    ]);
    expect(second.stop_reason).toBe('end_turn');
  });

  it('streams thinking with a signature when the request enables thinking', async () => {
    const { client } = await open({
      policy: script([
        [
          { type: 'thinking', thinking: 'Let me weigh the options carefully.' },
          { type: 'text', text: 'Option B.' },
        ],
      ]),
    });
    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [{ role: 'user', content: 'Pick one' }],
    });
    let signature = '';
    stream.on('signature', (value) => {
      signature = value;
    });
    const message = await stream.finalMessage();
    const thinking = message.content[0];
    expect(thinking?.type).toBe('thinking');
    if (thinking?.type !== 'thinking') return;
    expect(thinking.thinking).toBe('Let me weigh the options carefully.');
    expect(thinking.signature.length).toBeGreaterThan(20);
    expect(signature).toBe(thinking.signature);
    expect(message.content[1]).toEqual({ type: 'text', text: 'Option B.', citations: null });
  });

  it('leaves thinking out when the request does not enable it', async () => {
    const { client } = await open({
      policy: script([
        [
          { type: 'thinking', thinking: 'hidden' },
          { type: 'text', text: 'Visible.' },
        ],
      ]),
    });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Pick one' }],
    });
    expect(message.content.map((block) => block.type)).toEqual(['text']);
  });

  it('cuts the answer at max_tokens and reports stop_reason max_tokens', async () => {
    const { client } = await open({ policy: script(['word '.repeat(400)]) });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Talk' }],
    });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBeLessThanOrEqual(10);
    const first = message.content[0];
    expect(first?.type === 'text' ? first.text.length : 0).toBeLessThanOrEqual(40);
  });

  it('stops at a stop sequence', async () => {
    const { client } = await open({ policy: script(['alpha beta STOP gamma']) });
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      stop_sequences: ['STOP'],
      messages: [{ role: 'user', content: 'Talk' }],
    });
    expect(message.stop_reason).toBe('stop_sequence');
    expect(message.stop_sequence).toBe('STOP');
    expect(message.content).toEqual([{ type: 'text', text: 'alpha beta ', citations: null }]);
  });

  it('counts tokens with the same estimator as the usage of a real request', async () => {
    const { client } = await open({ policy: script(['ok']) });
    const params = {
      model: MODEL,
      system: 'You are terse.',
      tools: [
        {
          name: 'Read',
          description: 'Read a file',
          input_schema: { type: 'object' as const, properties: {} },
        },
      ],
      messages: [{ role: 'user' as const, content: 'How many tokens is this?' }],
    };
    const counted = await client.messages.countTokens(params);
    const message = await client.messages.create({ ...params, max_tokens: 50 });
    expect(counted.input_tokens).toBe(message.usage.input_tokens);
  });

  it('sets request-id on every response, errors included', async () => {
    const { sim } = await open();
    const notFound = await fetch(`${sim.url}/v1/nothing`, { method: 'POST' });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('request-id')).toMatch(/^req_/);
    const body = (await notFound.json()) as {
      type: string;
      error: { type: string };
      request_id: string;
    };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('not_found_error');
    expect(body.request_id).toBe(notFound.headers.get('request-id'));
  });
});

describe('the agent of a request', () => {
  it('decodes the percent-encoded x-delegate-agent header, so a rule on a non-ASCII agent matches', async () => {
    const { sim } = await open({
      policy: rules([
        { match: { agent: 'rév' }, reply: (request) => `agent ${request.agent}` },
        { match: {}, reply: (request) => `other ${String(request.agent)}` },
      ]),
    });
    const ask = async (agent: string): Promise<string> => {
      const client = new Anthropic({
        apiKey: 'test',
        baseURL: sim.url,
        maxRetries: 0,
        defaultHeaders: { 'x-delegate-agent': agent },
      });
      const message = await client.messages.create({
        model: MODEL,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
      });
      return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    };
    // What the runtime sends for `rév`: every byte outside printable ASCII, and `%`, encoded.
    expect(await ask('r%C3%A9v')).toBe('agent rév');
    expect(sim.journal.last()?.headers['x-delegate-agent']).toBe('r%C3%A9v');
    // Not valid percent-encoding (another client's raw value): taken as it is.
    expect(await ask('100%')).toBe('other 100%');
    expect(await ask('%E0%A4%A')).toBe('other %E0%A4%A');
  });
});

describe('connections that end early, and many at once', () => {
  const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

  it('records a client that leaves mid-stream and stops writing to it', async () => {
    const { client, sim } = await open({
      policy: () => 'word '.repeat(100),
      pacing: { msPerToken: 20 },
    });
    const controller = new AbortController();
    const stream = client.messages.stream(
      { model: MODEL, max_tokens: 1000, messages: [{ role: 'user', content: 'talk' }] },
      { signal: controller.signal },
    );
    let received = 0;
    const outcome = await (async () => {
      for await (const _event of stream) if (++received === 4) controller.abort();
    })().catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(Anthropic.APIUserAbortError);
    await vi.waitFor(() => expect(sim.journal.last()?.error?.type).toBe('client_disconnected'));
    const entry = sim.journal.last();
    expect(entry?.status).toBe(200);
    expect(entry?.error?.message).toMatch(/^the connection closed after \d+ of \d+ events$/);
    // The server carries on serving others.
    const next = await client.messages.create({
      model: MODEL,
      max_tokens: 5,
      messages: [{ role: 'user', content: 'again' }],
    });
    expect(next.type).toBe('message');
  });

  it('close() ends a request still waiting for its first byte: no timer left, nothing cached', async () => {
    let reached: () => void = () => undefined;
    const policyCalled = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const timersBefore = timers();
    const { client, sim } = await open({
      policy: () => {
        reached();
        return 'late';
      },
      pacing: { timeToFirstTokenMs: 60_000 },
    });
    const pending = client.messages
      .create({
        model: MODEL,
        max_tokens: 50,
        system: [
          { type: 'text', text: 'rules '.repeat(1000), cache_control: { type: 'ephemeral' } },
        ],
        messages: [{ role: 'user', content: 'hi' }],
      })
      .catch((error: unknown) => error);
    await policyCalled;
    await sim.close();
    expect(await pending).toBeInstanceOf(Anthropic.APIConnectionError);
    await vi.waitFor(() => expect(sim.journal.last()?.error?.type).toBe('client_disconnected'));
    expect(sim.journal.last()?.status).toBe(0);
    expect(sim.cache.size).toBe(0);
    expect(timers()).toBeLessThanOrEqual(timersBefore);
  });

  it('keeps 200 parallel scripted conversations apart', async () => {
    const { client, sim } = await open({
      policy: script([
        (request) => `first answer to ${request.lastUserText}`,
        (request) => `second answer to ${request.lastUserText}`,
      ]),
    });
    const conversation = async (index: number) => {
      const opening = `task ${index}`;
      const first = await client.messages.create({
        model: MODEL,
        max_tokens: 100,
        messages: [{ role: 'user', content: opening }],
      });
      const firstText = first.content[0]?.type === 'text' ? first.content[0].text : '';
      const second = await client.messages
        .stream({
          model: MODEL,
          max_tokens: 100,
          messages: [
            { role: 'user', content: opening },
            { role: 'assistant', content: firstText },
            { role: 'user', content: `follow-up ${index}` },
          ],
        })
        .finalMessage();
      return [firstText, second.content[0]?.type === 'text' ? second.content[0].text : ''];
    };
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) => conversation(index)),
    );
    answers.forEach(([first, second], index) => {
      expect(first).toBe(`first answer to task ${index}`);
      expect(second).toBe(`second answer to follow-up ${index}`);
    });
    expect(sim.journal.entries).toHaveLength(400);
    expect(new Set(sim.journal.entries.map((entry) => entry.conversationKey)).size).toBe(200);
  });
});
