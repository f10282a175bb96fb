import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type Sim } from './start-sim.js';

const MODEL = 'claude-sonnet-5';
let sim: Sim;
let client: Anthropic;

beforeAll(async () => {
  sim = await startSim({ policy: () => 'ok' });
  client = new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 });
});

afterAll(async () => {
  await sim.close();
});

async function rejection(
  body: Record<string, unknown>,
): Promise<InstanceType<typeof Anthropic.APIError>> {
  try {
    await client.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming);
  } catch (error) {
    if (error instanceof Anthropic.APIError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}

const user = (content: Anthropic.MessageParam['content']) => ({ role: 'user' as const, content });
const assistant = (content: Anthropic.MessageParam['content']) => ({
  role: 'assistant' as const,
  content,
});
const toolUse = (id: string) => ({ type: 'tool_use' as const, id, name: 'Read', input: {} });
const tools = [{ name: 'Read', input_schema: { type: 'object', properties: {} } }];

describe('request validation with the real API wording', () => {
  it('answers a tool_use without a tool_result in the next message', async () => {
    const error = await rejection({
      model: MODEL,
      max_tokens: 100,
      tools,
      messages: [
        user('hi'),
        assistant([toolUse('toolu_1'), toolUse('toolu_2')]),
        user('what now?'),
      ],
    });
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.apiMessage).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1, toolu_2. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
    expect(error.requestID).toMatch(/^req_/);
  });

  it('answers a tool_result whose id the previous message never used', async () => {
    const error = await rejection({
      model: MODEL,
      max_tokens: 100,
      tools,
      messages: [
        user('hi'),
        assistant([toolUse('toolu_1')]),
        user([
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'fine' },
          { type: 'tool_result', tool_use_id: 'toolu_9', content: 'stray' },
        ]),
      ],
    });
    expect(error.apiMessage).toBe(
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
  });

  it('refuses more than four cache_control breakpoints, counting the automatic one', async () => {
    const marked = (text: string) => ({
      type: 'text' as const,
      text,
      cache_control: { type: 'ephemeral' as const },
    });
    const error = await rejection({
      model: MODEL,
      max_tokens: 100,
      system: [marked('a'), marked('b')],
      messages: [user([marked('c'), marked('d'), marked('e')])],
    });
    expect(error.apiMessage).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
    const withAutomatic = await rejection({
      model: MODEL,
      max_tokens: 100,
      cache_control: { type: 'ephemeral' },
      system: [marked('a'), marked('b')],
      messages: [user([marked('c'), marked('d'), { type: 'text', text: 'e' }])],
    });
    expect(withAutomatic.apiMessage).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('refuses a 1h breakpoint after a 5m one, the automatic marker included', async () => {
    const marked = (text: string, ttl: '5m' | '1h') => ({
      type: 'text' as const,
      text,
      cache_control: { type: 'ephemeral' as const, ttl },
    });
    const ordering =
      "cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.";
    const explicit = await rejection({
      model: MODEL,
      max_tokens: 100,
      system: [marked('rules', '5m')],
      messages: [user('one'), user([{ type: 'text', text: 'two' }, marked('three', '1h')])],
    });
    // The path names the block as sent, before same-role messages are merged.
    expect(explicit.apiMessage).toBe(`messages.1.content.1.${ordering}`);
    const automatic = await rejection({
      model: MODEL,
      max_tokens: 100,
      cache_control: { type: 'ephemeral', ttl: '1h' },
      system: [marked('rules', '5m')],
      messages: [user('hi')],
    });
    expect(automatic.apiMessage).toBe(ordering);
    const longFirst = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      cache_control: { type: 'ephemeral' },
      system: [marked('rules', '1h')],
      messages: [user([marked('hi', '5m')])],
    });
    expect(longFirst.type).toBe('message');
  });

  it('refuses a final assistant message that ends with whitespace', async () => {
    const error = await rejection({
      model: MODEL,
      max_tokens: 100,
      messages: [user('hi'), assistant('The answer is ')],
    });
    expect(error.apiMessage).toBe(
      'messages: final assistant content cannot end with trailing whitespace',
    );
    // Only the final (prefill) message is checked.
    const earlier = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [user('hi'), assistant('Hello \n'), user('again')],
    });
    expect(earlier.type).toBe('message');
  });

  it('accepts every tool_result content form and refuses bodies over 32 MB', async () => {
    const image = {
      type: 'image' as const,
      source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'iVBORw0KGgo=' },
    };
    for (const content of [
      undefined,
      'text result',
      [{ type: 'text' as const, text: 'a' }, image],
    ]) {
      const message = await client.messages.create({
        model: MODEL,
        max_tokens: 100,
        tools: [{ name: 'Read', input_schema: { type: 'object', properties: {} } }],
        messages: [
          user('hi'),
          assistant([toolUse('toolu_1')]),
          user([
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              ...(content === undefined ? {} : { content }),
            },
          ]),
        ],
      });
      expect(message.type).toBe('message');
    }
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'test', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 5,
        messages: [user('x'.repeat(33 * 1024 * 1024))],
      }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { type: string } }).error.type).toBe(
      'request_too_large',
    );
  });

  it('requires max_tokens, model and messages', async () => {
    expect((await rejection({ model: MODEL, messages: [user('hi')] })).apiMessage).toBe(
      'max_tokens: Field required',
    );
    expect((await rejection({ max_tokens: 5, messages: [user('hi')] })).apiMessage).toBe(
      'model: Field required',
    );
    expect((await rejection({ model: MODEL, max_tokens: 5 })).apiMessage).toBe(
      'messages: Field required',
    );
  });

  it('requires max_tokens to exceed the thinking budget', async () => {
    const error = await rejection({
      model: MODEL,
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      messages: [user('hi')],
    });
    expect(error.apiMessage).toMatch(
      /^`max_tokens` must be greater than `thinking.budget_tokens`\./,
    );
  });

  it('refuses empty and whitespace-only text blocks', async () => {
    const empty = await rejection({
      model: MODEL,
      max_tokens: 5,
      messages: [user([{ type: 'text', text: '' }])],
    });
    expect(empty.apiMessage).toBe('messages: text content blocks must be non-empty');
    const blank = await rejection({
      model: MODEL,
      max_tokens: 5,
      messages: [user([{ type: 'text', text: '  \n' }])],
    });
    expect(blank.apiMessage).toBe('messages: text content blocks must contain non-whitespace text');
  });

  it('refuses a conversation that starts with the assistant', async () => {
    const error = await rejection({
      model: MODEL,
      max_tokens: 5,
      messages: [assistant('hello'), user('hi')],
    });
    expect(error.apiMessage).toBe('messages: first message must use the "user" role');
  });

  it('merges consecutive messages of one role instead of refusing them', async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 5,
      messages: [user('one'), user('two')],
    });
    expect(message.type).toBe('message');
    const entry = sim.journal.last();
    expect(entry?.fingerprint?.messages).toHaveLength(1);
    expect(entry?.turnIndex).toBe(0);
  });

  it('refuses duplicate tool names, unknown block types and cache_control on thinking', async () => {
    const duplicate = await rejection({
      model: MODEL,
      max_tokens: 5,
      tools: [...tools, ...tools],
      messages: [user('hi')],
    });
    expect(duplicate.apiMessage).toBe('tools: Tool names must be unique.');
    const unknown = await rejection({
      model: MODEL,
      max_tokens: 5,
      messages: [{ role: 'user', content: [{ type: 'video', url: 'x' }] }],
    });
    expect(unknown.apiMessage).toMatch(
      /^messages\.0\.content\.0: Input tag 'video' found using 'type'/,
    );
    const cachedThinking = await rejection({
      model: MODEL,
      max_tokens: 5,
      messages: [
        user('hi'),
        {
          role: 'assistant',
          content: [
            {
              type: 'thinking',
              thinking: 't',
              signature: 's',
              cache_control: { type: 'ephemeral' },
            },
          ],
        },
        user('next'),
      ],
    });
    expect(cachedThinking.apiMessage).toBe(
      'messages.1.content.0.thinking.cache_control: Extra inputs are not permitted',
    );
  });

  it('answers malformed JSON with a 400 in the error shape', async () => {
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'test', 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      type: string;
      error: { type: string; message: string };
      request_id: string;
    };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/not valid JSON/);
    expect(body.request_id).toBe(response.headers.get('request-id'));
  });

  it('answers 401 authentication_error when no key is sent', async () => {
    const anonymous = new Anthropic({
      apiKey: 'unused',
      baseURL: sim.url,
      maxRetries: 0,
      defaultHeaders: { Authorization: null },
    });
    const failure = await anonymous.messages
      .create({ model: MODEL, max_tokens: 5, messages: [user('hi')] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((failure as InstanceType<typeof Anthropic.AuthenticationError>).apiMessage).toBe(
      'x-api-key header is required',
    );
    expect(sim.journal.last()?.auth).toBe('none');
  });

  it('answers 404 not_found_error on unknown routes', async () => {
    const failure = await client.post('/v1/unknown', { body: {} }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.NotFoundError);
    expect((failure as InstanceType<typeof Anthropic.NotFoundError>).type).toBe('not_found_error');
  });
});

describe('apiKeys option', () => {
  it('refuses keys outside the list', async () => {
    const strict = await startSim({ apiKeys: ['good'] });
    try {
      const bad = new Anthropic({ apiKey: 'bad', baseURL: strict.url, maxRetries: 0 });
      const failure = await bad.messages
        .create({ model: MODEL, max_tokens: 5, messages: [user('hi')] })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.AuthenticationError);
      const good = new Anthropic({ apiKey: 'good', baseURL: strict.url, maxRetries: 0 });
      expect(
        (await good.messages.create({ model: MODEL, max_tokens: 5, messages: [user('hi')] })).type,
      ).toBe('message');
    } finally {
      await strict.close();
    }
  });
});
