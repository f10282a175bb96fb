import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Sim, rules, script, startSim } from '@delegate/api-sim';
import { createRootToolUseContext } from '@delegate/context-isolation';
import {
  type AssistantMessage,
  type Message,
  type Tool,
  type UserMessage,
  DelegateError,
  createUserMessage,
  getText,
} from '@delegate/core';
import { getBuiltinTools } from '@delegate/tools';
import { z } from 'zod';
import { watchTool } from '../__fixtures__/watch-tool.js';
import { createApiClient } from '../session/model-config.js';
import { createCanUseTool } from '../permissions.js';
import { type QueryEvent, type QueryOutcome, type QueryParams, query } from './query.js';

const SYSTEM = ['You are a test agent. '.repeat(400)];

let sim: Sim | undefined;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'delegate-query-'));
});

afterEach(async () => {
  await sim?.close();
  sim = undefined;
  await rm(dir, { recursive: true, force: true });
});

function rootContext(
  tools: Tool[],
  options: { mode?: 'default' | 'acceptEdits' | 'bypassPermissions' } = {},
) {
  return createRootToolUseContext({
    cwd: dir,
    tools,
    model: 'claude-sonnet-5-5',
    appState: {
      toolPermissionContext: {
        mode: options.mode ?? 'acceptEdits',
        allowRules: [],
        denyRules: [],
        askRules: [],
        additionalWorkingDirectories: [],
      },
    },
  });
}

/** Runs `query` against the simulator with the defaults every test here shares. */
function testQuery(
  params: Pick<QueryParams, 'messages' | 'toolUseContext'> & Partial<QueryParams>,
) {
  return query({
    client: createApiClient({ apiKey: 'k', baseURL: sim!.url, maxRetries: 3 }),
    systemPrompt: SYSTEM,
    canUseTool: createCanUseTool(),
    querySource: 'test',
    ...params,
  });
}

async function collect(generator: AsyncGenerator<QueryEvent, QueryOutcome>) {
  const events: QueryEvent[] = [];
  for (;;) {
    const next = await generator.next();
    if (next.done) return { events, outcome: next.value };
    events.push(next.value);
  }
}

function messagesOf(events: QueryEvent[]): Array<UserMessage | AssistantMessage> {
  return events.filter(
    (event): event is UserMessage | AssistantMessage =>
      event.type === 'user' || event.type === 'assistant',
  );
}

describe('query', () => {
  it.each([
    ['no params', () => undefined, 'params'],
    [
      'no client',
      (params: Record<string, unknown>) => ({ ...params, client: undefined }),
      'params.client',
    ],
    [
      'messages as text',
      (params: Record<string, unknown>) => ({ ...params, messages: 'hi' }),
      'params.messages',
    ],
    [
      'no toolUseContext',
      (params: Record<string, unknown>) => ({ ...params, toolUseContext: undefined }),
      'params.toolUseContext',
    ],
    [
      'canUseTool as a rule',
      (params: Record<string, unknown>) => ({ ...params, canUseTool: 'allow' }),
      'params.canUseTool',
    ],
    [
      'maxTurns as text',
      (params: Record<string, unknown>) => ({ ...params, maxTurns: '3' }),
      'params.maxTurns',
    ],
    [
      // Node would run the stall watchdog's timer after 1 ms and abort every stream.
      'streamIdleTimeoutMs Infinity',
      (params: Record<string, unknown>) => ({
        ...params,
        streamIdleTimeoutMs: Number.POSITIVE_INFINITY,
      }),
      'params.streamIdleTimeoutMs',
    ],
    [
      'a secret too short to redact',
      (params: Record<string, unknown>) => ({ ...params, secrets: ['sekret'] }),
      'params.secrets[0]',
    ],
    [
      'secrets as one string',
      (params: Record<string, unknown>) => ({ ...params, secrets: 'sekret-value' }),
      'params.secrets',
    ],
    [
      'an API key where the client goes',
      (params: Record<string, unknown>) => ({ ...params, client: 'sk-ant-sekret-key' }),
      'params.client',
    ],
  ])(
    'refuses %s with INVALID_ARGUMENT naming the option, before any request',
    async (_case, change, option) => {
      sim = await startSim({ policy: rules([]) });
      const params = {
        client: createApiClient({ apiKey: 'k', baseURL: sim.url, maxRetries: 0 }),
        messages: [createUserMessage({ content: 'hi' })],
        systemPrompt: SYSTEM,
        toolUseContext: rootContext([]),
        canUseTool: createCanUseTool(),
        querySource: 'test',
      };
      const error = await collect(query(change(params) as unknown as QueryParams)).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(DelegateError);
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { option } });
      expect((error as Error).message).toContain(`query(): ${option} must be`);
      // A wrong string is described, never repeated: it may be a secret.
      expect((error as Error).message).not.toContain('sekret');
      expect(sim.journal.entries).toHaveLength(0);
    },
  );

  it('runs a multi-turn tool loop over real files', async () => {
    await writeFile(join(dir, 'notes.txt'), 'alpha\nbeta\n');
    sim = await startSim({
      policy: script([
        [{ type: 'tool_use', name: 'Read', input: { file_path: join(dir, 'notes.txt') } }],
        (request) => [
          {
            type: 'tool_use',
            name: 'Edit',
            input: { file_path: join(dir, 'notes.txt'), old_string: 'beta', new_string: 'gamma' },
          },
          {
            type: 'text',
            text: `saw ${request.toolResults[0]?.content.includes('beta') ? 'beta' : 'nothing'}`,
          },
        ],
        'Done: beta is now gamma.',
      ]),
    });
    const context = rootContext(getBuiltinTools());
    const { events, outcome } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'Change beta to gamma in notes.txt' })],
        toolUseContext: context,
      }),
    );
    expect(outcome).toEqual({ reason: 'completed', turns: 3 });
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('alpha\ngamma\n');
    const assistants = messagesOf(events).filter((message) => message.type === 'assistant');
    expect(getText(assistants.at(-1)!.message.content)).toBe('Done: beta is now gamma.');
    // Every tool_use was answered with a tool_result in the next request.
    expect(sim.journal.entries.every((entry) => entry.status === 200)).toBe(true);
  });

  it('runs concurrency-safe tools of one turn in parallel and unsafe ones in order', async () => {
    const log: string[] = [];
    let running = 0;
    let maxRunning = 0;
    // The reads wait for one another: they can only finish if all three run at once, so
    // the test does not depend on timing (the guard only keeps a broken loop from hanging).
    let allStarted!: () => void;
    const threeRunning = new Promise<void>((resolve) => (allStarted = resolve));
    const makeTool = (name: string, safe: boolean): Tool => ({
      name,
      inputSchema: z.object({ id: z.string() }),
      description: () => `${name} test tool`,
      isReadOnly: () => safe,
      isConcurrencySafe: () => safe,
      async call(input: { id: string }) {
        running++;
        maxRunning = Math.max(maxRunning, running);
        log.push(`start ${input.id}`);
        if (safe) {
          if (running === 3) allStarted();
          await Promise.race([threeRunning, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        }
        log.push(`end ${input.id}`);
        running--;
        return { content: `ok ${input.id}` };
      },
    });
    sim = await startSim({
      policy: script([
        [
          { type: 'tool_use', name: 'Look', input: { id: 'a' } },
          { type: 'tool_use', name: 'Look', input: { id: 'b' } },
          { type: 'tool_use', name: 'Look', input: { id: 'c' } },
          { type: 'tool_use', name: 'Change', input: { id: 'd' } },
          { type: 'tool_use', name: 'Change', input: { id: 'e' } },
        ],
        'finished',
      ]),
    });
    const context = rootContext([makeTool('Look', true), makeTool('Change', false)], {
      mode: 'bypassPermissions',
    });
    const { events } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'go' })],
        toolUseContext: context,
      }),
    );
    // a, b and c overlapped; d and e ran one after the other, after the reads.
    expect(log.slice(0, 3).sort()).toEqual(['start a', 'start b', 'start c']);
    expect(log.slice(6)).toEqual(['start d', 'end d', 'start e', 'end e']);
    expect(maxRunning).toBe(3);
    // Results come back in the order of the calls.
    const resultMessage = messagesOf(events).find(
      (message) =>
        message.type === 'user' &&
        Array.isArray(message.message.content) &&
        message.message.content[0]?.type === 'tool_result',
    );
    const ids = (
      resultMessage!.message.content as Array<{ type: string; content?: Array<{ text: string }> }>
    ).map((block) => block.content?.[0]?.text);
    expect(ids).toEqual(['ok a', 'ok b', 'ok c', 'ok d', 'ok e']);
  });

  it('ends cleanly when aborted mid-stream', async () => {
    sim = await startSim({ policy: script(['x'.repeat(4000)]), pacing: { msPerToken: 5 } });
    const context = rootContext([]);
    const generator = testQuery({
      messages: [createUserMessage({ content: 'long answer please' })],
      toolUseContext: context,
    });
    const events: QueryEvent[] = [];
    let outcome: QueryOutcome | undefined;
    for (;;) {
      const next = await generator.next();
      if (next.done) {
        outcome = next.value;
        break;
      }
      events.push(next.value);
      if (next.value.type === 'stream_event' && next.value.event.type === 'content_block_delta') {
        context.abortController.abort();
      }
    }
    expect(outcome?.reason).toBe('aborted');
    expect(events.some((event) => event.type === 'assistant')).toBe(false);
  });

  it('kills a running Bash command and its children when aborted mid-tool', async () => {
    const marker = `${Date.now() % 100000}.${process.pid % 1000}7`;
    sim = await startSim({
      policy: script([
        [
          {
            type: 'tool_use',
            name: 'Bash',
            input: { command: `sleep ${marker} & sleep ${marker}; wait` },
          },
        ],
        'unreachable',
      ]),
    });
    const context = rootContext(getBuiltinTools(), { mode: 'bypassPermissions' });
    const generator = testQuery({
      messages: [createUserMessage({ content: 'sleep' })],
      toolUseContext: context,
    });
    const running = (): boolean => {
      try {
        return (
          execFileSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' }).trim().length > 0
        );
      } catch {
        return false;
      }
    };
    const pending = collect(generator);
    const deadline = Date.now() + 10_000;
    while (!running() && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(running()).toBe(true);
    context.abortController.abort();
    const { events, outcome } = await pending;
    expect(outcome.reason).toBe('aborted');
    const goneBy = Date.now() + 5_000;
    while (running() && Date.now() < goneBy)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(running()).toBe(false);
    // The interrupted call still got a result, so the transcript stays well paired.
    const last = messagesOf(events).at(-1)!;
    expect(last.type).toBe('user');
    expect(JSON.stringify(last.message.content)).toContain('is_error');
  });

  it('interrupts the running tool calls of a consumer that breaks out, and returns once they ended', async () => {
    const marker = `${Date.now() % 100000}.${process.pid % 1000}3`;
    let reason: unknown;
    const watch = watchTool((abortReason) => (reason = abortReason));
    sim = await startSim({
      policy: script([
        [
          // A shell left in the background outlives the call and the loop; the watch does not.
          {
            type: 'tool_use',
            name: 'Bash',
            input: { command: `sleep ${marker}`, run_in_background: true },
          },
          { type: 'tool_use', name: 'Watch', input: {} },
        ],
        'unreachable',
      ]),
    });
    const context = rootContext([...getBuiltinTools(), watch], { mode: 'bypassPermissions' });
    const seen: string[] = [];
    for await (const event of testQuery({
      messages: [createUserMessage({ content: 'watch' })],
      toolUseContext: context,
    })) {
      seen.push(event.type);
      if (event.type === 'progress') break;
    }
    expect(seen).toContain('progress');
    // The break returned after the call saw its abort, with the loop's reason.
    expect(DelegateError.isInstance(reason) && reason.code).toBe('ABORTED');
    expect(context.abortController.signal.aborted).toBe(false);
    expect(sim.journal.entries).toHaveLength(1);
    const shellRunning = (): boolean => {
      try {
        return execFileSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' }).length > 0;
      } catch {
        return false;
      }
    };
    expect(shellRunning()).toBe(true);
    // The caller's own abort still reaches the shell the loop left in the background.
    context.abortController.abort();
    const goneBy = Date.now() + 5_000;
    while (shellRunning() && Date.now() < goneBy)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(shellRunning()).toBe(false);
  });

  it("retries a 429 and a 529 up to the client's maxRetries, saying so before each", async () => {
    sim = await startSim({
      policy: script(['fine']),
      faults: [
        { kind: 'rate_limit', onRequests: [1], retryAfterSeconds: 0.001 },
        { kind: 'overloaded', onRequests: [2] },
      ],
    });
    const { events, outcome } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'hi' })],
        toolUseContext: rootContext([]),
      }),
    );
    expect(outcome.reason).toBe('completed');
    expect(sim.journal.entries.map((entry) => entry.status)).toEqual([429, 529, 200]);
    // Each attempt says how many came before it, as the SDK's own retries do.
    expect(sim.journal.entries.map((entry) => entry.headers['x-stainless-retry-count'])).toEqual([
      '0',
      '1',
      '2',
    ]);
    const retries = events.flatMap((event) =>
      event.type === 'system' && event.subtype === 'api_retry' ? [event.content] : [],
    );
    expect(retries).toEqual([
      expect.stringMatching(
        /^The API request failed \(429 rate_limit_error: .*\); retrying in 1 ms \(1\/3\)\.$/,
      ),
      expect.stringMatching(
        /^The API request failed \(529 overloaded_error: .*\); retrying in \d+ ms \(2\/3\)\.$/,
      ),
    ]);
  });

  it('waits out a retry-after longer than the idle timeout without calling it a stall', async () => {
    sim = await startSim({
      policy: script(['fine']),
      faults: [{ kind: 'rate_limit', onRequests: [1, 2], retryAfterSeconds: 0.6 }],
    });
    const { events, outcome } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'hi' })],
        toolUseContext: rootContext([]),
        streamIdleTimeoutMs: 250,
      }),
    );
    expect(outcome.reason).toBe('completed');
    expect(sim.journal.entries.map((entry) => entry.status)).toEqual([429, 429, 200]);
    const retries = events.flatMap((event) =>
      event.type === 'system' && event.subtype === 'api_retry' ? [event.content] : [],
    );
    expect(retries).toHaveLength(2);
    for (const retry of retries) expect(retry).toMatch(/429 rate_limit_error.*retrying in 600 ms/);
  });

  it('fails with the API error, not a stall, once the request retries are used up', async () => {
    sim = await startSim({
      policy: script(['never']),
      faults: [{ kind: 'overloaded', retryAfterSeconds: 0.001 }],
    });
    await expect(
      collect(
        testQuery({
          client: createApiClient({ apiKey: 'k', baseURL: sim.url, maxRetries: 1 }),
          messages: [createUserMessage({ content: 'hi' })],
          toolUseContext: rootContext([]),
          streamIdleTimeoutMs: 250,
        }),
      ),
    ).rejects.toMatchObject({
      code: 'API_ERROR',
      message: expect.stringContaining('529 overloaded_error'),
    });
    expect(sim.journal.entries.map((entry) => entry.status)).toEqual([529, 529]);
  });

  it('fails at once, saying what it got, when a server answers 200 with a page instead of an event stream', async () => {
    // Only the portal is asked; testQuery's default client needs a simulator to point at.
    sim = await startSim({ policy: script(['never asked']) });
    let requests = 0;
    const portal = createServer((_request, response) => {
      requests++;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<html><body>Please sign in to the network</body></html>');
    });
    await new Promise<void>((resolve) => portal.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = portal.address() as AddressInfo;
      await expect(
        collect(
          testQuery({
            client: createApiClient({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}` }),
            messages: [createUserMessage({ content: 'hi' })],
            toolUseContext: rootContext([]),
          }),
        ),
      ).rejects.toMatchObject({
        code: 'API_ERROR',
        message: expect.stringContaining(
          'failed: the server answered 200 with text/html, not an event stream',
        ),
      });
      expect(requests).toBe(1);
    } finally {
      await new Promise((resolve) => portal.close(resolve));
    }
  });

  it('refuses, without retrying, a response stream that never ends', async () => {
    sim = await startSim({ policy: script(['never asked']) });
    let requests = 0;
    let written = 0;
    const endless = createServer((_request, response) => {
      requests++;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (event: string, data: unknown) =>
        response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send('message_start', {
        type: 'message_start',
        message: {
          id: 'msg_endless',
          type: 'message',
          role: 'assistant',
          model: 'm',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      });
      send('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      });
      const chunk = 'x'.repeat(64 * 1024);
      const pump = () => {
        while (!response.destroyed) {
          written += chunk.length;
          const more = send('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text: chunk },
          });
          if (!more) return void response.once('drain', pump);
        }
      };
      pump();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = endless.address() as AddressInfo;
      await expect(
        collect(
          testQuery({
            client: createApiClient({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}` }),
            messages: [createUserMessage({ content: 'hi' })],
            toolUseContext: rootContext([]),
          }),
        ),
      ).rejects.toMatchObject({
        code: 'API_ERROR',
        message: expect.stringContaining('characters without ending'),
      });
      expect(requests).toBe(1);
      // Refused near the limit, not after the whole stream: the server sent a bounded amount.
      expect(written).toBeLessThan(64 * 1024 * 1024);
    } finally {
      endless.closeAllConnections();
      await new Promise((resolve) => endless.close(resolve));
    }
  });

  it('takes a response whose connection stays open after its message_stop', async () => {
    sim = await startSim({
      policy: script(['whole']),
      faults: [{ kind: 'stall', afterEvents: 1_000 }],
    });
    const { events, outcome } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'hi' })],
        toolUseContext: rootContext([]),
        streamIdleTimeoutMs: 60_000,
      }),
    );
    expect(outcome.reason).toBe('completed');
    expect(events.filter((event) => event.type === 'system')).toEqual([]);
    const assistant = events.find((event) => event.type === 'assistant');
    expect(assistant?.type === 'assistant' && assistant.message.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'whole' }),
    ]);
    expect(sim.journal.entries).toHaveLength(1);
  });

  it('repairs a dangling tool_use so the API does not answer 400', async () => {
    sim = await startSim({ policy: rules([], { fallback: 'recovered' }) });
    const dangling: Message = {
      type: 'assistant',
      uuid: 'u-dangling',
      timestamp: new Date().toISOString(),
      message: {
        id: 'msg_old',
        role: 'assistant',
        model: 'claude-sonnet-5-5',
        content: [{ type: 'tool_use', id: 'toolu_lost', name: 'Read', input: { file_path: '/x' } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    };
    const { outcome } = await collect(
      testQuery({
        messages: [
          createUserMessage({ content: 'read /x' }),
          dangling,
          createUserMessage({ content: 'and then?' }),
        ],
        toolUseContext: rootContext([]),
      }),
    );
    expect(outcome.reason).toBe('completed');
    const body = sim.journal.entries[0]!.body as {
      messages: Array<{ role: string; content: Array<{ type: string; tool_use_id?: string }> }>;
    };
    expect(sim.journal.entries[0]!.status).toBe(200);
    expect(body.messages[2]!.content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_lost',
    });
  });

  it("reads the previous turn's prefix from the prompt cache on turn 2", async () => {
    sim = await startSim({
      policy: script([[{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }], 'done']),
    });
    await collect(
      testQuery({
        messages: [createUserMessage({ content: 'list files' })],
        toolUseContext: rootContext(getBuiltinTools()),
      }),
    );
    const [first, second] = sim.journal.entries;
    expect(first!.usage!.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(first!.usage!.cache_read_input_tokens).toBe(0);
    expect(second!.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(
      first!.usage!.cache_creation_input_tokens,
    );
  });

  it('stops at maxTurns with a typed error', async () => {
    sim = await startSim({
      policy: rules([], {
        fallback: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }],
      }),
    });
    const attempt = collect(
      testQuery({
        messages: [createUserMessage({ content: 'loop forever' })],
        toolUseContext: rootContext(getBuiltinTools()),
        maxTurns: 2,
      }),
    );
    await expect(attempt).rejects.toSatisfy((error: unknown) =>
      DelegateError.hasCode(error, 'MAX_TURNS'),
    );
    expect(sim.journal.entries).toHaveLength(2);
  });

  it('answers a denied tool call with an error result instead of running it', async () => {
    sim = await startSim({
      policy: script([
        [
          {
            type: 'tool_use',
            name: 'Write',
            input: { file_path: join(dir, 'x.txt'), content: 'x' },
          },
        ],
        'ok',
      ]),
    });
    const { events } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'write' })],
        toolUseContext: rootContext(getBuiltinTools(), { mode: 'default' }),
      }),
    );
    const results = JSON.stringify(messagesOf(events).filter((message) => message.type === 'user'));
    expect(results).toContain('Permission denied');
    await expect(readFile(join(dir, 'x.txt'), 'utf8')).rejects.toThrow();
  });

  it('retries a stream that fails mid-way and keeps one response with its own usage', async () => {
    // The error arrives late in the first attempt (its usage may be in), before its message_stop.
    sim = await startSim({
      policy: script(['all good']),
      faults: [{ kind: 'stream_error', onRequests: [1], afterEvents: 5 }],
    });
    const { events, outcome } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'hi' })],
        toolUseContext: rootContext([]),
      }),
    );
    expect(outcome.reason).toBe('completed');
    const retryIndex = events.findIndex(
      (event) => event.type === 'system' && event.subtype === 'api_retry',
    );
    expect(retryIndex).toBeGreaterThan(0);
    // The failed attempt's events come before the retry notice; one assistant message after.
    const stops = events.filter(
      (event) => event.type === 'stream_event' && event.event.type === 'message_stop',
    );
    expect(stops).toHaveLength(1);
    expect(events.indexOf(stops[0]!)).toBeGreaterThan(retryIndex);
    const assistants = events.filter((event) => event.type === 'assistant');
    expect(assistants).toHaveLength(1);
    expect(events.indexOf(assistants[0]!)).toBeGreaterThan(retryIndex);
  });

  it('stops at once when aborted while waiting to retry a failed stream', async () => {
    sim = await startSim({
      policy: script(['never reached']),
      faults: [{ kind: 'stream_error', afterEvents: 2 }],
    });
    const context = rootContext([]);
    const generator = testQuery({
      messages: [createUserMessage({ content: 'hi' })],
      toolUseContext: context,
    });
    for (;;) {
      const next = await generator.next();
      expect(next.done).toBe(false);
      if (!next.done && next.value.type === 'system') break;
    }
    // The backoff timer is frozen: only the abort can end the wait.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const ending = generator.next();
      context.abortController.abort();
      const last = await ending;
      expect(last).toEqual({ done: true, value: { reason: 'aborted', turns: 1 } });
    } finally {
      vi.useRealTimers();
    }
    expect(sim.journal.entries).toHaveLength(1);
  });

  it('ends a run at its turn limit as completed and leaves a late message queued', async () => {
    sim = await startSim({ policy: script(['first answer', 'second answer']) });
    const queue: UserMessage[] = [];
    let drains = 0;
    const { events, outcome } = await collect(
      testQuery({
        messages: [createUserMessage({ content: 'hi' })],
        toolUseContext: rootContext([]),
        maxTurns: 1,
        drainQueuedMessages: () => {
          // A message arrives while the only allowed response streams.
          if (++drains === 1) queue.push(createUserMessage({ content: 'one more thing' }));
          else return queue.splice(0, queue.length);
          return [];
        },
      }),
    );
    expect(outcome).toEqual({ reason: 'completed', turns: 1 });
    expect(getText(messagesOf(events).at(-1)!.message.content)).toBe('first answer');
    expect(queue.map((message) => getText(message.message.content))).toEqual(['one more thing']);
  });
});
