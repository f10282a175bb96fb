import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rules } from '@delegate/api-sim';
import { type Tool, DelegateError, getText, totalTokens } from '@delegate/core';
import { agentCall, agentOf, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { DelegateSession } from '../session/session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const retries = (session: TestSession['session']) =>
  session.messages.filter(
    (message) => message.type === 'system' && message.subtype === 'api_retry',
  );

/** A tool that waits `waitMs` unless its signal aborts first, and says which happened. */

/** The main agent calls the Wait tool once, then answers with what the tool said. */
function callWaitThenReport() {
  return rules([
    {
      match: { when: isMain, toolResult: false },
      reply: [{ type: 'tool_use', name: 'Wait', input: {} }],
    },
    { match: { when: isMain }, reply: (request) => `tool said: ${resultText(request)}` },
  ]);
}
function waitingTool(options: { waitMs: number; timeoutMs?: number; seen: string[] }): Tool {
  return {
    name: 'Wait',
    description: () => 'Waits a while.',
    inputSchema: z.object({}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: (_input, context) =>
      new Promise((resolve, reject) => {
        const signal = context.abortController.signal;
        const timer = setTimeout(() => {
          options.seen.push('finished');
          resolve({ content: 'waited' });
        }, options.waitMs);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          options.seen.push('aborted');
          reject(new Error('aborted'));
        });
      }),
  };
}

describe('stall watchdog', () => {
  it('aborts a stream that stops sending, retries it, and the agent finishes', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'job', prompt: 'do it', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'the job is done' },
        { match: { when: isMain }, reply: (request) => resultText(request) },
      ]),
      sim: {
        faults: [{ kind: 'stall', afterEvents: 2, times: 1, match: { agent: 'general-purpose' } }],
      },
      session: { streamIdleTimeoutMs: 150 },
    });
    const { session, sim } = current;
    const { text } = await session.send('go');
    expect(text).toContain('the job is done');
    const child = sim.journal.filter((entry) => agentOf(entry) === 'general-purpose');
    expect(child.map((entry) => entry.fault)).toEqual(['stall', undefined]);
    expect(child[0]?.error?.message).toContain('the client closed the connection');
    // The stalled attempt's usage is not counted.
    const node = session.usage().children[0]!;
    expect(totalTokens(node.usage)).toBe(totalTokens(child[1]?.usage));
  });

  it('retries a main-agent stream that stalls right after its headers', async () => {
    current = await createTestSession({
      policy: rules([], { fallback: 'hello' }),
      sim: { faults: [{ kind: 'stall', afterEvents: 0, times: 2 }] },
      session: { streamIdleTimeoutMs: 100 },
    });
    const { session, sim } = current;
    const { text } = await session.send('hi');
    expect(text).toBe('hello');
    expect(sim.journal.entries.map((entry) => entry.fault)).toEqual(['stall', 'stall', undefined]);
    expect(retries(session).map((message) => message.type === 'system' && message.content)).toEqual(
      [
        expect.stringMatching(/stalled \(no event for 100 ms\); retrying \(stall 1\/3\)/),
        expect.stringMatching(/stall 2\/3/),
      ],
    );
  });

  it('fails the agent after three stalls in a row, with a message naming them', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'job', prompt: 'do it', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'never seen' },
        { match: { when: isMain }, reply: (request) => resultText(request) },
      ]),
      sim: { faults: [{ kind: 'stall', afterEvents: 1, match: { agent: 'general-purpose' } }] },
      session: { streamIdleTimeoutMs: 80 },
    });
    const { session, sim } = current;
    const failed: string[] = [];
    session.events.on((event) => {
      if (event.type === 'agent.failed') failed.push(`${event.code}: ${event.error}`);
    });
    const { text } = await session.send('go');
    expect(sim.journal.filter((entry) => agentOf(entry) === 'general-purpose')).toHaveLength(3);
    expect(failed).toEqual([
      expect.stringMatching(
        /^STREAM_STALLED: .*stalled 3 times in a row: each time no event arrived for 80 ms/,
      ),
    ]);
    // The parent is told as a tool error, and goes on.
    expect(text).toMatch(/stalled 3 times in a row/);
  });

  it('honours maxConsecutiveStalls and throws STREAM_STALLED from send for the main agent', async () => {
    current = await createTestSession({
      policy: rules([], { fallback: 'hello' }),
      sim: { faults: [{ kind: 'stall', afterEvents: 0 }] },
      session: { streamIdleTimeoutMs: 60, maxConsecutiveStalls: 2 },
    });
    const error = await current.session.send('hi').catch((thrown: unknown) => thrown);
    expect(DelegateError.hasCode(error, 'STREAM_STALLED')).toBe(true);
    expect((error as Error).message).toContain('stalled 2 times in a row');
    expect(current.sim.journal.entries).toHaveLength(2);
  });

  it('does not count time spent running tools as a stall', async () => {
    const seen: string[] = [];
    current = await createTestSession({
      policy: callWaitThenReport(),
      session: { streamIdleTimeoutMs: 100, tools: [waitingTool({ waitMs: 400, seen })] },
    });
    const { text } = await current.session.send('wait');
    expect(text).toBe('tool said: waited');
    expect(seen).toEqual(['finished']);
    expect(retries(current.session)).toEqual([]);
    expect(current.sim.journal.entries).toHaveLength(2);
  });
});

describe('tool timeouts', () => {
  it('stops a tool call past its own timeout and reports it to the agent as an error result', async () => {
    const seen: string[] = [];
    current = await createTestSession({
      policy: callWaitThenReport(),
      session: { tools: [waitingTool({ waitMs: 30_000, timeoutMs: 50, seen })] },
    });
    const { session, sim } = current;
    const { text } = await session.send('wait');
    expect(text).toMatch(
      /^tool said: Wait did not finish within its timeout of 50 ms and was stopped/,
    );
    expect(seen).toEqual(['aborted']);
    const result = sim.journal.entries[1]?.body as {
      messages: Array<{ content: Array<{ type: string; is_error?: boolean }> }>;
    };
    expect(
      result.messages.at(-1)?.content.find((block) => block.type === 'tool_result')?.is_error,
    ).toBe(true);
    // The session itself was not stopped.
    expect(session.context.abortController.signal.aborted).toBe(false);
    const last = session.messages.at(-1);
    expect(last?.type === 'assistant' && getText(last.message.content)).toContain('tool said');
  });

  it('takes a timeoutMs of Infinity as no limit, and refuses a tool whose timeoutMs is negative', async () => {
    const seen: string[] = [];
    current = await createTestSession({
      policy: callWaitThenReport(),
      // Node runs a timer it cannot hold after 1 ms: this call used to time out at once.
      session: {
        tools: [waitingTool({ waitMs: 100, timeoutMs: Number.POSITIVE_INFINITY, seen })],
      },
    });
    expect((await current.session.send('wait')).text).toBe('tool said: waited');
    expect(seen).toEqual(['finished']);
    await expect(
      DelegateSession.create({
        cwd: current.cwd,
        apiKey: 'k',
        baseURL: current.sim.url,
        transcriptDir: false,
        tools: [waitingTool({ waitMs: 1, timeoutMs: -5, seen })],
      }),
    ).rejects.toThrow(/options\.tools\[0\]\.timeoutMs: .*more than 0/);
  });
});
