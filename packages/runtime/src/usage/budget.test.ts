import { afterEach, describe, expect, it } from 'vitest';
import { type JournalEntry, type Policy, type SimRequest, rules } from '@delegate/api-sim';
import { type AgentEvent, DelegateError, getText, totalTokens } from '@delegate/core';
import { agentCall, agentOf, customAgent, isMain } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';
import type { DelegateSessionOptions } from '../session/session-options.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const isFork = (request: SimRequest) => request.agent === 'fork';
const glob = [
  { type: 'text' as const, text: 'Checking the files.' },
  { type: 'tool_use' as const, name: 'Glob', input: { pattern: '*' } },
];
const tokensOf = (entries: readonly JournalEntry[]) =>
  entries.reduce((sum, entry) => sum + totalTokens(entry.usage), 0);

/** Three forks in one batch, each calling Glob for eight turns before it reports. */
const forkBatch: Policy = rules([
  {
    match: { when: isMain, toolResult: false },
    reply: [1, 2, 3].map((n) => agentCall({ description: `part ${n}`, prompt: `do part ${n}` })),
  },
  { match: { when: (request) => isFork(request) && request.turnIndex >= 9 }, reply: 'part done' },
  { match: { when: isFork }, reply: glob },
  { match: { when: isMain }, reply: 'merged' },
]);

async function forkSession(options: Partial<DelegateSessionOptions>): Promise<TestSession> {
  return createTestSession({ policy: forkBatch, session: { forkEnabled: true, ...options } });
}

describe('budgets', () => {
  it('warns once that a cost budget cannot count a model the price table has no price for', async () => {
    current = await createTestSession({
      policy: rules([{ match: {}, reply: 'ok' }]),
      session: { model: 'claude-unpriced-9', maxCostUsd: 0.5 },
    });
    const warnings: AgentEvent[] = [];
    current.session.events.on((event) => {
      if (event.type === 'agent.warning') warnings.push(event);
    });
    await current.session.send('one');
    await current.session.send('two');
    expect(warnings).toMatchObject([
      {
        code: 'BUDGET_UNPRICED',
        message: expect.stringMatching(
          /^The main agent runs claude-unpriced-9, which the price table has no price for, .*never stops it\. Add a priceTable entry for claude-unpriced-9/,
        ),
      },
    ]);
  });

  it('stops every fork of a batch when the session budget runs out, and the parent gets partial reports', async () => {
    // Measured without a budget: the main agent's first response and one fork request.
    const calibration = await forkSession({});
    await calibration.session.send('split it');
    const mainFirst = totalTokens(calibration.sim.journal.entries[0]?.usage);
    const forkFirst = totalTokens(
      calibration.sim.journal.filter((entry) => agentOf(entry) === 'fork')[0]?.usage,
    );
    await calibration.cleanup();
    // About two rounds of the batch: far short of the eight turns each fork needs.
    const maxTokens = mainFirst + 6 * forkFirst;

    current = await forkSession({ maxTokens });
    const { session, sim } = current;
    const events: AgentEvent[] = [];
    session.events.on((event) => void events.push(event));
    const error = await session.send('split it').catch((thrown: unknown) => thrown);
    await session.flush();

    // What is left may or may not pay for the main agent's next request (its input is at
    // least its previous response): it either answers, or stops with the budget error.
    const mainRequests = sim.journal.filter((entry) => agentOf(entry) === undefined);
    if (DelegateError.hasCode(error, 'BUDGET_EXCEEDED')) {
      expect(error.message).toMatch(/session's budget of [\d,]+ tokens/);
      expect(mainRequests).toHaveLength(1);
    } else {
      expect(error).toMatchObject({ text: 'merged' });
      expect(mainRequests).toHaveLength(2);
    }
    const failed = events.filter(
      (event): event is Extract<AgentEvent, { type: 'agent.failed' }> =>
        event.type === 'agent.failed',
    );
    expect(failed).toHaveLength(3);
    expect(failed.every((event) => event.code === 'BUDGET_EXCEEDED')).toBe(true);
    expect(events.some((event) => event.type === 'agent.completed')).toBe(false);

    // The parent's conversation holds one partial report per fork, marked as such.
    const results = session.messages
      .flatMap((message) =>
        message.type === 'user' && Array.isArray(message.message.content)
          ? message.message.content
          : [],
      )
      .filter((block) => block.type === 'tool_result');
    expect(results).toHaveLength(3);
    for (const block of results) {
      const text = getText(block.content as never);
      expect(text).toMatch(/stopped early \(Budget exceeded/);
    }
    // Overshoot is bounded by the requests already in flight (one per fork).
    const largestFork = Math.max(
      ...sim.journal
        .filter((entry) => agentOf(entry) === 'fork')
        .map((entry) => totalTokens(entry.usage)),
    );
    expect(tokensOf(sim.journal.entries)).toBeLessThanOrEqual(maxTokens + 3 * largestFork);
    // What is left is visible in the events, and it shrinks to what the tree has left.
    const left = events.flatMap((event) =>
      event.type === 'agent.cost' ? [event.sessionRemaining.tokens ?? -1] : [],
    );
    expect(left.length).toBeGreaterThan(3);
    expect([...left].sort((a, b) => b - a)).toEqual(left);
    expect(left.at(-1)).toBe(session.usage().remaining.tokens);
    expect(session.usage().remaining.tokens).toBeLessThan(largestFork);
  });

  it("stops a background agent at its definition's budget, its notification says so, and its sibling goes on", async () => {
    const looper = (maxTokens?: number) =>
      customAgent(
        `---\nname: looper\ndescription: Loops.\ntools: Glob\n${maxTokens ? `maxTokens: ${maxTokens}\n` : ''}---\nYou loop.`,
      );
    const steady = customAgent(
      '---\nname: steady\ndescription: Steady.\ntools: Glob\n---\nYou work.',
    );
    const policy = rules([
      {
        match: { when: isMain, toolResult: false, lastUserText: 'start' },
        reply: ['looper', 'steady'].map((type) =>
          agentCall({
            description: type,
            prompt: 'go',
            subagent_type: type,
            run_in_background: true,
          }),
        ),
      },
      {
        match: { agent: /looper|steady/, when: (request) => request.turnIndex >= 6 },
        reply: 'done',
      },
      { match: { agent: /looper|steady/ }, reply: glob },
      { match: { when: isMain }, reply: 'noted' },
    ]);
    const calibration = await createTestSession({ policy, agents: [looper(), steady] });
    await calibration.session.send('start', { waitForBackground: true });
    const looperFirst = totalTokens(
      calibration.sim.journal.filter((entry) => agentOf(entry) === 'looper')[0]?.usage,
    );
    await calibration.cleanup();

    const maxTokens = 3 * looperFirst;
    current = await createTestSession({ policy, agents: [looper(maxTokens), steady] });
    const { session, sim } = current;
    const ended: AgentEvent[] = [];
    session.events.on((event) => {
      if (event.type === 'agent.failed' || event.type === 'agent.completed') ended.push(event);
    });
    await session.send('start', { waitForBackground: true });
    await session.flush();

    const looperNode = session.usage().children.find((child) => child.agentType === 'looper')!;
    expect(looperNode.budget).toEqual({ maxTokens });
    expect(looperNode.remaining.tokens).toBeLessThan(looperFirst);
    const looperFailed = ended.find((event) => event.agentId === looperNode.agentId);
    expect(looperFailed?.type === 'agent.failed' && looperFailed.code).toBe('BUDGET_EXCEEDED');
    // Spent at most its budget plus the one request in flight when it ran out.
    const looperRequests = sim.journal.filter((entry) => agentOf(entry) === 'looper');
    expect(looperRequests.length).toBeLessThan(7);
    const largest = Math.max(...looperRequests.map((entry) => totalTokens(entry.usage)));
    expect(tokensOf(looperRequests)).toBeLessThanOrEqual(maxTokens + largest);
    // Its sibling has no budget of its own and finished its seven turns.
    expect(sim.journal.filter((entry) => agentOf(entry) === 'steady')).toHaveLength(7);
    // Each notification reached the main agent once; the looper's says why it stopped.
    const lastRequest = JSON.stringify(
      sim.journal.filter((entry) => agentOf(entry) === undefined).at(-1)?.body,
    );
    for (const task of session.tasks.list()) {
      expect(task.notification?.status).toBe('delivered');
      expect(lastRequest.split(`task-id: ${task.id}`)).toHaveLength(2);
    }
    const looperTask = session.tasks.list().find((task) => task.agentType === 'looper')!;
    expect(looperTask.status).toBe('failed');
    expect(looperTask.notification?.text).toMatch(/error: Budget exceeded/);
    expect(looperTask.notification?.text).toMatch(/result:\nChecking the files\./);
  });

  it('does not start a sub-agent when the response that asks for it already used the budget up', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'job', prompt: 'do it', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'done' },
      ]),
      session: { maxTokens: 100 },
    });
    const error = await current.session.send('go').catch((thrown: unknown) => thrown);
    expect(DelegateError.hasCode(error, 'BUDGET_EXCEEDED')).toBe(true);
    expect((error as Error).message).toContain('after its last response');
    expect(current.sim.journal.entries).toHaveLength(1);
    expect(current.session.usage().children).toEqual([]);
  });

  it('refuses the next send once the session budget cannot pay for the context it would send again', async () => {
    const policy = rules([
      { match: { lastUserText: 'survey' }, reply: glob },
      { match: {}, reply: 'Nothing more.' },
    ]);
    // Measured without a budget: the first response's whole context.
    current = await createTestSession({ policy });
    await current.session.send('survey', { maxTurns: 1 }).catch(() => undefined);
    const first = tokensOf(current.sim.journal.entries);
    await current.cleanup();
    // Room for that first request, not for a second one carrying it again.
    const maxTokens = Math.floor(first * 1.5);
    current = await createTestSession({ policy, session: { maxTokens } });
    const { session, sim } = current;
    const stopped = await session.send('survey').catch((thrown: unknown) => thrown);
    expect(DelegateError.hasCode(stopped, 'BUDGET_EXCEEDED')).toBe(true);
    expect(sim.journal.entries).toHaveLength(1);
    // The next send would send the whole conversation again: it is refused before any request.
    const again = await session.send('and now?').catch((thrown: unknown) => thrown);
    expect(DelegateError.hasCode(again, 'BUDGET_EXCEEDED')).toBe(true);
    expect((again as Error).message).toContain('before its next request');
    // Some of it is left: the message says what, and what the request would have needed.
    const used = totalTokens(session.usage().treeUsage);
    expect((again as Error).message).toContain(
      `${maxTokens.toLocaleString('en-US')} tokens (${used.toLocaleString('en-US')} used) has ${(maxTokens - used).toLocaleString('en-US')} tokens left, less than the next request needs (at least `,
    );
    expect(sim.journal.entries).toHaveLength(1);
    expect(used).toBeLessThanOrEqual(maxTokens);
  });

  it('reads an Agent call budget written as the definition keys spell it, and shows the model snake_case', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'job',
              prompt: 'do it',
              subagent_type: 'general-purpose',
              maxTokens: 900_000,
              maxCostUsd: 3,
            }),
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'done' },
        { match: { when: isMain }, reply: 'ok' },
      ]),
    });
    const started: unknown[] = [];
    current.session.events.on((event) => {
      if (event.type === 'agent.started') started.push(event.remaining);
    });
    await current.session.send('go');
    expect(current.session.usage().children[0]?.budget).toEqual({
      maxTokens: 900_000,
      maxCostUsd: 3,
    });
    // Its start already shows what it may spend.
    expect(started).toEqual([{ tokens: 900_000, costUsd: 3 }]);
    const tools = (
      current.sim.journal.entries[0]?.body as {
        tools: Array<{ name: string; input_schema: { properties: object } }>;
      }
    ).tools;
    const agentTool = tools.find((tool) => tool.name === 'Agent')!;
    expect(Object.keys(agentTool.input_schema.properties)).toEqual(
      expect.arrayContaining(['max_tokens', 'max_cost_usd', 'subagent_type']),
    );
    expect(Object.keys(agentTool.input_schema.properties)).not.toContain('maxTokens');
  });

  it('gives an Agent call its own budget, never more than the caller has left', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'job',
              prompt: 'do it',
              subagent_type: 'general-purpose',
              max_tokens: 5_000_000,
              max_cost_usd: 0.000001,
            }),
          ],
        },
        { match: { agent: 'general-purpose' }, reply: glob },
        { match: { when: isMain }, reply: 'ok' },
      ]),
      session: { maxCostUsd: 50 },
    });
    const { session, sim } = current;
    await session.send('go');
    const child = session.usage().children[0]!;
    expect(child.budget).toEqual({ maxTokens: 5_000_000, maxCostUsd: 0.000001 });
    // Its one response spent the tiny cost budget: it stopped before running its tool.
    expect(sim.journal.filter((entry) => agentOf(entry) === 'general-purpose')).toHaveLength(1);
    expect(child.remaining.costUsd).toBe(0);
    // Its own token budget shrank by what it used; the session has no token limit.
    expect(child.remaining.tokens).toBe(5_000_000 - totalTokens(child.usage));
    expect(session.usage().remaining).toEqual({ costUsd: 50 - session.usage().treeCostUsd });
    await waitUntil(() => session.runtime.pendingRuns.size === 0);
  });
});
