import { afterEach, describe, expect, it } from 'vitest';
import { type JournalEntry, type SimRequest, rules } from '@delegate/api-sim';
import {
  type AgentEvent,
  type CompleteUsage,
  DEFAULT_PRICE_TABLE,
  type PriceTable,
  addUsage,
  costOfUsage,
  emptyUsage,
} from '@delegate/core';
import { agentCall, agentOf, isMain } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import type { AgentUsageNode } from './usage-ledger.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const PRICES: PriceTable = {
  // Distinct figures, so a test that passes with them cannot be reading the default table.
  sonnet: {
    inputPerMTok: 7,
    outputPerMTok: 31,
    cacheWrite5mPerMTok: 9,
    cacheWrite1hPerMTok: 13,
    cacheReadPerMTok: 0.5,
  },
};
const TABLE = { ...DEFAULT_PRICE_TABLE, ...PRICES };

/** Usage and cost of the journal's kept responses (a faulted stream was retried, so it is not kept). */
function journalFigures(entries: readonly JournalEntry[]): {
  usage: CompleteUsage;
  costUsd: number;
} {
  let usage = emptyUsage();
  let costUsd = 0;
  for (const entry of entries) {
    if (entry.fault || !entry.usage) continue;
    usage = addUsage(usage, entry.usage);
    costUsd += costOfUsage(entry.usage, entry.model ?? '', TABLE).costUsd;
  }
  return { usage, costUsd };
}

function byType(tree: AgentUsageNode, agentType: string): AgentUsageNode {
  const found = tree.children.find((child) => child.agentType === agentType);
  if (!found) throw new Error(`no ${agentType} child in the usage tree`);
  return found;
}

const isForkRequest = (request: SimRequest) => request.forkDirective !== undefined;

describe('usage and cost per agent', () => {
  it('sums a tree of foreground, background and fork agents to the journal times the price table', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'look',
              prompt: 'look around',
              subagent_type: 'general-purpose',
            }),
            agentCall({ description: 'half', prompt: 'do half the work' }),
            agentCall({
              description: 'bg',
              prompt: 'search in the background',
              subagent_type: 'Explore',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { when: isForkRequest, toolResult: false },
          reply: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }],
        },
        { match: { when: isForkRequest }, reply: 'fork done' },
        { match: { agent: 'general-purpose' }, reply: 'looked around carefully' },
        { match: { agent: 'Explore' }, reply: 'found nothing of note' },
        { match: { when: isMain }, reply: 'all reported' },
      ]),
      // One retried stream: its partial usage must not count.
      sim: { faults: [{ kind: 'stream_error', match: { agent: 'general-purpose' }, times: 1 }] },
      session: { forkEnabled: true, priceTable: PRICES, maxBackgroundAgents: 4 },
    });
    const { session, sim } = current;
    const completed: Array<Extract<AgentEvent, { type: 'agent.completed' }>> = [];
    session.events.on((event) => {
      if (event.type === 'agent.completed') completed.push(event);
    });
    const result = await session.send('split the work', { waitForBackground: true });
    await session.flush();

    const tree = session.usage();
    const whole = journalFigures(sim.journal.entries);
    expect(sim.journal.entries.some((entry) => entry.fault === 'stream_error' && entry.usage)).toBe(
      true,
    );
    expect(tree.treeUsage).toEqual(whole.usage);
    expect(tree.treeCostUsd).toBeCloseTo(whole.costUsd, 12);

    const main = journalFigures(sim.journal.filter((entry) => agentOf(entry) === undefined));
    expect(tree.usage).toEqual(main.usage);
    expect(tree.costUsd).toBeCloseTo(main.costUsd, 12);
    for (const type of ['general-purpose', 'fork', 'Explore']) {
      const node = byType(tree, type);
      const own = journalFigures(sim.journal.filter((entry) => agentOf(entry) === type));
      expect(node.usage, type).toEqual(own.usage);
      expect(node.costUsd, type).toBeCloseTo(own.costUsd, 12);
      expect(node.costUsd, type).toBeGreaterThan(0);
      // The completion event carries the same figures as the tree (one run each).
      const event = completed.find((candidate) => candidate.agentId === node.agentId);
      expect(event?.costUsd, type).toBeCloseTo(own.costUsd, 12);
      expect(event?.usage, type).toEqual(own.usage);
      const record = session.runtime.agents.get(node.agentId);
      expect(record && 'usage' in record ? record.usage : undefined).toEqual(own.usage);
    }

    // Everything ran inside this one call.
    expect(result.usage).toEqual(whole.usage);
    expect(result.costUsd).toBeCloseTo(whole.costUsd, 12);
    expect(result.agents.map((agent) => agent.agentType).sort()).toEqual([
      'Explore',
      'fork',
      'general-purpose',
    ]);
    expect(result.text).toBe('all reported');
    const task = session.tasks.list().find((candidate) => candidate.agentType === 'Explore');
    expect(task?.costUsd).toBeCloseTo(byType(tree, 'Explore').costUsd, 12);
  });

  it('counts only the new work in a second send', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false, lastUserText: 'delegate' },
          reply: [
            agentCall({ description: 'job', prompt: 'do it', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'done' },
        { match: { when: isMain }, reply: 'ok' },
      ]),
    });
    const { session, sim } = current;
    await session.send('hello');
    const before = sim.journal.entries.length;
    const second = await session.send('delegate this');
    const added = journalFigures(sim.journal.entries.slice(before).map((entry) => entry));
    expect(second.usage).toEqual(added.usage);
    expect(second.agents).toHaveLength(1);
    expect(second.agents[0]?.agentType).toBe('general-purpose');
    expect(session.usage().children).toHaveLength(1);
  });

  it('counts work forked after a turn under the main agent', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'a short answer' }) });
    const { session, sim } = current;
    await session.send('hello');
    const fork = await session.forkAfterTurn({ prompt: 'Summarise', skipTranscript: true });
    expect(sim.journal.entries).toHaveLength(2);
    const whole = journalFigures(sim.journal.entries);
    expect(session.usage().usage).toEqual(whole.usage);
    expect(session.usage().usage).toEqual(
      addUsage(journalFigures(sim.journal.entries.slice(0, 1)).usage, fork.totalUsage),
    );
  });

  it('refuses a price table that is not one, naming the field', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'x' }) });
    const { DelegateSession } = await import('../session/session.js');
    await expect(
      DelegateSession.create({
        cwd: current.cwd,
        client: current.session.runtime.client,
        transcriptDir: false,
        priceTable: { sonnet: { inputPerMTok: -1 } } as unknown as PriceTable,
      }),
    ).rejects.toThrow(/options\.priceTable\.sonnet/);
  });
});
