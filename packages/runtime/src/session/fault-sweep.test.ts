import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FaultSpec, type SimRequest, rules } from '@delegate/api-sim';
import { type AgentEvent, DelegateError } from '@delegate/core';
import {
  agentCall,
  agentOf,
  isMain,
  requestBody,
  resultText,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import { createApiClient } from './model-config.js';
import { DelegateSession } from './session.js';

let current: TestSession | undefined;
const extra: DelegateSession[] = [];

afterEach(async () => {
  for (const session of extra.splice(0)) await session.close();
  await current?.cleanup();
  current = undefined;
});

type Kind = 'main' | 'foreground' | 'background' | 'fork';

/** The `x-delegate-agent` value of the agent under test (undefined: the main agent). */
const headerOf = (kind: Kind): string | undefined =>
  kind === 'main' ? undefined : kind === 'fork' ? 'fork' : 'general-purpose';

const spawnInput = (kind: Kind): Record<string, unknown> => {
  const base = { description: 'job', prompt: 'Directive: do the job' };
  if (kind === 'fork') return base;
  return {
    ...base,
    subagent_type: 'general-purpose',
    ...(kind === 'background' ? { run_in_background: true } : {}),
  };
};

/** True once the agent got its Glob result (a fork's first request holds the parent's Agent placeholder). */
const hasGlobResult = (request: SimRequest): boolean =>
  request.toolResults.some((result) => result.toolName === 'Glob');

/**
 * The agent under test lists the files (a Glob call), then says `worker finished`. The main
 * agent (when it is not the one under test) starts it, then repeats what it was told.
 */
function policyFor(kind: Kind, rawGlobInput?: string) {
  const target = headerOf(kind);
  const isTarget = (request: SimRequest) => request.agent === target;
  return rules([
    {
      match: { when: (request) => isTarget(request) && !hasGlobResult(request) },
      reply: [
        {
          type: 'tool_use',
          name: 'Glob',
          input: { pattern: '**/*.txt' },
          ...(rawGlobInput === undefined ? {} : { rawInput: rawGlobInput }),
        },
      ],
    },
    { match: { when: isTarget, toolResult: 'Glob' }, reply: 'worker finished' },
    {
      match: { when: isMain, lastUserText: '<task-notification>' },
      reply: (request) => `notified: ${request.lastUserText}`,
    },
    {
      match: { when: isMain, toolResult: false },
      reply: [agentCall(spawnInput(kind))],
    },
    { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
  ]);
}

/** Matches the requests of the agent under test; `afterTool` only those that carry the Glob result. */
function targetMatch(kind: Kind, afterTool: boolean) {
  const target = headerOf(kind);
  return (request: SimRequest) => request.agent === target && hasGlobResult(request) === afterTool;
}

async function open(kind: Kind, faults: FaultSpec[], rawGlobInput?: string): Promise<TestSession> {
  current = await createTestSession({
    policy: policyFor(kind, rawGlobInput),
    sim: { faults },
    session: {
      forkEnabled: kind === 'fork',
      streamIdleTimeoutMs: 300,
      permissionMode: 'bypassPermissions',
    },
  });
  return current;
}

async function transcriptOf(test: TestSession, kind: Kind, events: AgentEvent[]) {
  const store = test.session.transcript!;
  if (kind === 'main') return readTranscript(store.sessionPath(), { onWarning: fail });
  const started = events.find((event) => event.type === 'agent.started');
  expect(started).toBeDefined();
  return readTranscript(store.agentPath(started!.agentId), { onWarning: fail });
}

function fail(warning: unknown): never {
  throw new Error(`unexpected transcript warning: ${JSON.stringify(warning)}`);
}

async function run(test: TestSession, kind: Kind): Promise<{ text: string; events: AgentEvent[] }> {
  const events: AgentEvent[] = [];
  test.session.events.on((event) => events.push(event));
  const { text } = await test.session.send('go', { waitForBackground: kind === 'background' });
  await test.session.flush();
  return { text, events };
}

const kinds: Kind[] = ['main', 'foreground', 'background', 'fork'];

/** Faults from which every agent is expected to recover. */
const recoverable: Array<{ name: string; fault: (kind: Kind) => FaultSpec }> = [
  {
    // message_start, content_block_start, ping, one input_json_delta: then the socket dies.
    name: 'a connection reset inside a tool_use JSON',
    fault: (kind) => ({
      kind: 'connection_reset',
      afterEvents: 4,
      times: 1,
      match: targetMatch(kind, false),
    }),
  },
  {
    name: 'a connection reset inside a text block',
    fault: (kind) => ({
      kind: 'connection_reset',
      afterEvents: 4,
      times: 1,
      match: targetMatch(kind, true),
    }),
  },
  {
    name: 'an overloaded error event inside the stream',
    fault: (kind) => ({
      kind: 'stream_error',
      afterEvents: 4,
      times: 1,
      match: targetMatch(kind, false),
    }),
  },
  {
    name: 'a stream that stalls past the idle timeout',
    fault: (kind) => ({ kind: 'stall', afterEvents: 4, times: 1, match: targetMatch(kind, true) }),
  },
  {
    name: 'a 529 then a 429 with retry-after',
    fault: (kind) => ({ kind: 'overloaded', times: 1, match: targetMatch(kind, true) }),
  },
  {
    name: 'a 429 with retry-after',
    fault: (kind) => ({
      kind: 'rate_limit',
      times: 2,
      retryAfterSeconds: 0.01,
      match: targetMatch(kind, false),
    }),
  },
  {
    name: 'a 500',
    fault: (kind) => ({ kind: 'api_error', times: 1, match: targetMatch(kind, true) }),
  },
];

/** Faults that outlast every retry: the agent fails, and says why in the API's own words. */
const persistent: Array<{ name: string; fault: (kind: Kind) => FaultSpec; expected: RegExp }> = [
  {
    name: 'an api_error event in every stream',
    fault: (kind) => ({
      kind: 'stream_error',
      afterEvents: 4,
      errorType: 'api_error',
      message: 'Internal server error',
      match: targetMatch(kind, true),
    }),
    expected: /failed: api_error: Internal server error \(request req_\w+\)/,
  },
  {
    name: 'a 529 on every retry',
    fault: (kind) => ({ kind: 'overloaded', match: targetMatch(kind, true) }),
    expected: /failed: 529 overloaded_error: Overloaded \(request req_\w+\)/,
  },
];

describe.each(kinds)('fault sweep: %s agent', (kind) => {
  it.each(recoverable)(
    'recovers from $name, and its transcript keeps each response once',
    async ({ fault }) => {
      const test = await open(kind, [fault(kind)]);
      const { text, events } = await run(test, kind);
      expect(text).toContain('worker finished');
      expect(test.sim.journal.entries.some((entry) => entry.fault !== undefined)).toBe(true);
      const lines = await transcriptOf(test, kind, events);
      const own = lines.filter((line) => line.type === 'user' || line.type === 'assistant');
      const assistants = own.filter((line) => line.type === 'assistant');
      const globCalls = assistants.filter((line) => JSON.stringify(line).includes('"name":"Glob"'));
      expect(globCalls).toHaveLength(1);
      expect(
        assistants.filter((line) => JSON.stringify(line).includes('worker finished')),
      ).toHaveLength(1);
      // Every uuid once: no partial attempt was written next to its retry.
      const uuids = lines.map((line) => line.uuid);
      expect(new Set(uuids).size).toBe(uuids.length);
      expect(events.filter((event) => event.type === 'agent.failed')).toEqual([]);
    },
  );

  it.each(persistent)(
    'fails on $name with a clear error naming the agent, keeping its transcript',
    async ({ fault, expected }) => {
      const test = await open(kind, [fault(kind)]);
      const events: AgentEvent[] = [];
      test.session.events.on((event) => events.push(event));
      const name = kind === 'main' ? 'the main agent' : `agent ${headerOf(kind)}`;
      if (kind === 'main') {
        const error = await test.session.send('go').catch((caught: unknown) => caught);
        expect(DelegateError.isInstance(error) && error.code).toBe('API_ERROR');
        expect((error as Error).message).toContain(name);
        expect((error as Error).message).toMatch(expected);
        expect((error as Error).message).not.toContain('{"type":"error"');
      } else {
        const { text } = await test.session.send('go', {
          waitForBackground: kind === 'background',
        });
        // The parent carried on: it answered with what it was told.
        if (kind === 'background') {
          expect(text).toContain('notified:');
          expect(text).toContain('status: failed');
        }
        expect(text).toContain(name);
        expect(text).toMatch(expected);
        const failed = events.find((event) => event.type === 'agent.failed');
        expect(failed).toMatchObject({ code: 'API_ERROR' });
      }
      await test.session.flush();
      const lines = await transcriptOf(test, kind, events);
      const kept = lines.filter((line) => line.type === 'user' || line.type === 'assistant');
      // The first turn and its tool result survive the failure of the second request.
      expect(kept.map((line) => line.type).slice(-3)).toEqual(['user', 'assistant', 'user']);
      expect(JSON.stringify(kept.at(-2))).toContain('"name":"Glob"');
    },
  );
});

/** A session whose `send('go')` failed: the main agent's second request kept failing mid-stream. */
async function failedMainTurn(): Promise<TestSession> {
  const test = await open('main', [
    {
      kind: 'stream_error',
      afterEvents: 4,
      errorType: 'api_error',
      times: 3,
      match: targetMatch('main', true),
    },
  ]);
  await expect(test.session.send('go')).rejects.toThrow(/the main agent/);
  return test;
}

describe('fault sweep: resume after a failure', () => {
  it('resumes a session whose main agent failed mid-run, and the conversation goes on', async () => {
    const test = await failedMainTurn();
    await test.session.flush();
    const resumed = await DelegateSession.create({
      cwd: test.cwd,
      client: createApiClient({ apiKey: 'k', baseURL: test.sim.url }),
      transcriptDir: test.transcriptDir,
      homeDir: test.homeDir,
      sessionId: test.session.sessionId,
      resume: true,
      permissionMode: 'bypassPermissions',
    });
    extra.push(resumed);
    const { text } = await resumed.send('please go on');
    expect(text.length).toBeGreaterThan(0);
    const lines = await readTranscript(test.session.transcript!.sessionPath(), { onWarning: fail });
    const uuids = lines.map((line) => line.uuid);
    expect(new Set(uuids).size).toBe(uuids.length);
    expect(agentOf(test.sim.journal.entries.at(-1)!)).toBeUndefined();
  });
});

describe.each(kinds)('fault sweep: max_tokens inside a tool call, %s agent', (kind) => {
  it('gives the cut call an error result instead of running it, and the agent goes on', async () => {
    const target = headerOf(kind);
    const isTarget = (request: SimRequest) => request.agent === target;
    const wroteAlready = (request: SimRequest) =>
      request.toolResults.some((result) => result.toolName === 'Write');
    // Far more than the 16,384 output tokens a request allows.
    const huge = { file_path: 'big.txt', content: 'z'.repeat(80_000) };
    current = await createTestSession({
      policy: rules([
        {
          match: { when: (request) => isTarget(request) && !wroteAlready(request) },
          reply: [{ type: 'tool_use', name: 'Write', input: huge }],
        },
        {
          match: { when: isTarget },
          reply: (request) => `worker finished after: ${resultText(request)}`,
        },
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `notified: ${request.lastUserText}`,
        },
        { match: { when: isMain, toolResult: false }, reply: [agentCall(spawnInput(kind))] },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { forkEnabled: kind === 'fork', permissionMode: 'bypassPermissions' },
    });
    const { text, events } = await run(current, kind);
    expect(text).toContain('worker finished after:');
    expect(text).toContain('is not complete JSON');
    const cut = current.sim.journal.entries.find((entry) => entry.stopReason === 'max_tokens');
    expect(agentOf(cut!)).toBe(target);
    // Nothing was written.
    await expect(readFile(join(current.cwd, 'big.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    const lines = await transcriptOf(current, kind, events);
    const results = lines.filter(
      (line) => line.type === 'user' && JSON.stringify(line).includes('is not complete JSON'),
    );
    expect(results).toHaveLength(1);
    expect(JSON.stringify(results[0])).toContain('"is_error":true');
    // The cut input is not resent whole: the next request holds only its head.
    const next = current.sim.journal.entries.filter((entry) => agentOf(entry) === target).at(-1)!;
    const resent = JSON.stringify(requestBody(next).messages);
    expect(resent).toMatch(
      /more characters of this unusable input were removed from the conversation\]/,
    );
    expect(resent.length).toBeLessThan(20_000);
  });
});

describe.each(['foreground', 'fork'] as const)(
  'fault sweep: a %s agent whose first request keeps failing',
  (kind) => {
    it('gives its parent an error tool result naming the agent, and the parent goes on', async () => {
      const test = await open(kind, [
        {
          kind: 'stream_error',
          afterEvents: 2,
          errorType: 'api_error',
          match: targetMatch(kind, false),
        },
      ]);
      const events: AgentEvent[] = [];
      test.session.events.on((event) => events.push(event));
      const { text } = await test.session.send('go');
      expect(text).toMatch(new RegExp(`agent ${headerOf(kind)} .*failed: api_error: Overloaded`));
      const answer = test.sim.journal.entries.filter((entry) => agentOf(entry) === undefined)[1]!;
      const messages = requestBody(answer).messages;
      const result = messages.at(-1)!.content.find((block) => block.type === 'tool_result');
      expect(result?.is_error).toBe(true);
      // The agent's own transcript says why it stopped where it did, as its last line.
      await test.session.flush();
      const lines = await transcriptOf(test, kind, events);
      expect(lines.at(-1)).toMatchObject({
        type: 'system',
        subtype: 'run_ended',
        content: expect.stringMatching(/^The run failed: .*api_error: Overloaded/),
      });
    });
  },
);

describe('fault sweep: the same session after a failed send', () => {
  it('answers the next send, with the failed turn’s work still in the conversation', async () => {
    const test = await failedMainTurn();
    const { text } = await test.session.send('please go on');
    expect(text).toBe('worker finished');
    const last = requestBody(test.sim.journal.entries.at(-1)!);
    // The Glob call and its result were sent again, once, before the new text.
    const blocks = last.messages.flatMap((message) => message.content.map((block) => block.type));
    expect(blocks.filter((type) => type === 'tool_use')).toHaveLength(1);
    expect(blocks.filter((type) => type === 'tool_result')).toHaveLength(1);
    await test.session.flush();
    const lines = await readTranscript(test.session.transcript!.sessionPath(), { onWarning: fail });
    const uuids = lines.map((line) => line.uuid);
    expect(new Set(uuids).size).toBe(uuids.length);
  });
});

describe.each(kinds)('fault sweep: malformed JSON in a tool input, %s agent', (kind) => {
  it('gives the call an error result saying its JSON is not valid, and the agent goes on', async () => {
    // The Glob call of the agent under test arrives with a trailing comma in its JSON.
    const test = await open(kind, [], '{"pattern": "**/*.txt",}');
    const { text, events } = await run(test, kind);
    expect(text).toContain('worker finished');
    const lines = await transcriptOf(test, kind, events);
    const results = lines.filter(
      (line) => line.type === 'user' && JSON.stringify(line).includes('is not valid JSON'),
    );
    expect(results).toHaveLength(1);
    expect(JSON.stringify(results[0])).toContain('"is_error":true');
    expect(JSON.stringify(results[0])).not.toContain('output token limit');
  });
});
