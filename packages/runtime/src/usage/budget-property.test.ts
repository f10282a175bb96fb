import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Reply, type SimRequest, rules } from '@delegate/api-sim';
import { DelegateError, totalTokens } from '@delegate/core';
import { agentCall, customAgent, isMain } from '../__fixtures__/sim-helpers.js';
import { createTestSession } from '../__fixtures__/test-session.js';
import type { DelegateSession } from '../session/session.js';
import type { AgentUsageNode } from './usage-ledger.js';

type ChildPlan = { mode: 'foreground' | 'background' | 'fork'; turns: number; maxTokens?: number };
type TreePlan = { maxTokens?: number; children: ChildPlan[] };

const childPlan: fc.Arbitrary<ChildPlan> = fc.record(
  {
    mode: fc.constantFrom('foreground' as const, 'background' as const, 'fork' as const),
    turns: fc.integer({ min: 1, max: 4 }),
    maxTokens: fc.integer({ min: 200, max: 4_000 }),
  },
  { requiredKeys: ['mode', 'turns'] },
);
const treePlan: fc.Arbitrary<TreePlan> = fc.record(
  {
    maxTokens: fc.integer({ min: 3_000, max: 40_000 }),
    children: fc.array(childPlan, { minLength: 1, maxLength: 4 }),
  },
  { requiredKeys: ['children'] },
);

const glob: Reply = [
  { type: 'text', text: 'Looking.' },
  { type: 'tool_use', name: 'Glob', input: { pattern: '*' } },
];

/** Which planned child sent a request: its agent type, or the marker in a fork's directive. */
function childOf(request: SimRequest): number | undefined {
  const typed = /^t(\d+)$/.exec(request.agent ?? '');
  if (typed) return Number(typed[1]);
  for (const message of request.messages) {
    if (message.role !== 'user') continue;
    for (const block of message.content) {
      const marker = block.type === 'text' ? /fork-marker-(\d+)/.exec(String(block.text)) : null;
      if (marker) return Number(marker[1]);
    }
  }
  return undefined;
}

function callFor(plan: ChildPlan, index: number) {
  const base = {
    description: `node-${index}`,
    ...(plan.maxTokens !== undefined ? { max_tokens: plan.maxTokens } : {}),
  };
  if (plan.mode === 'fork') return agentCall({ ...base, prompt: `fork-marker-${index}` });
  return agentCall({
    ...base,
    prompt: 'work',
    subagent_type: `t${index}`,
    ...(plan.mode === 'background' ? { run_in_background: true } : {}),
  });
}

/**
 * One child at a time: the main agent starts the next child only after every background
 * one has ended, so nothing else is recorded between an agent's budget check and the
 * moment its request reaches the simulator.
 */
async function runTree(
  plan: TreePlan,
): Promise<{ violations: string[]; childRequests: number; budgetStops: number }> {
  const violations: string[] = [];
  const lastContext = new Map<string, number>();
  const live: { session?: DelegateSession } = {};
  let childRequests = 0;
  const nodeOf = (index: number | undefined): AgentUsageNode | undefined => {
    const tree = live.session!.usage();
    return index === undefined
      ? tree
      : tree.children.find((child) => child.description === `node-${index}`);
  };
  const check = async (request: SimRequest): Promise<void> => {
    const index = childOf(request);
    const node = index === undefined ? undefined : nodeOf(index);
    if (!node) return void violations.push(`request ${request.index} from an unknown agent`);
    childRequests++;
    const root = nodeOf(undefined)!;
    const needed = lastContext.get(node.agentId) ?? 0;
    for (const [who, remaining] of [
      ['itself', node.remaining.tokens],
      ['the session', root.remaining.tokens],
    ] as const) {
      if (remaining !== undefined && remaining <= needed)
        violations.push(
          `request ${request.index} of ${node.description || 'main'}: ${who} had ${remaining} left, the request needs over ${needed}`,
        );
    }
  };
  const policy = rules([
    {
      match: { when: isMain },
      reply: async (request) => {
        // The main agent's own request may overlap a background child's last response, so
        // only children are checked here (the whole tree is checked afterwards).
        while (live.session!.tasks.runningBackgroundCount > 0)
          await new Promise((resolve) => setTimeout(resolve, 5));
        const started = request.messages.filter((message) => message.role === 'assistant').length;
        const next = plan.children[started];
        return next ? [callFor(next, started)] : 'all done';
      },
    },
    {
      match: { when: () => true },
      reply: async (request) => {
        await check(request);
        const index = childOf(request) ?? 0;
        const own = request.messages.filter((message) => message.role === 'assistant').length;
        const fork = plan.children[index]?.mode === 'fork';
        // A fork's conversation starts with the main agent's history.
        const done = own - (fork ? index + 1 : 0) >= (plan.children[index]?.turns ?? 1);
        return done ? 'finished' : glob;
      },
    },
  ]);
  const agents = plan.children.map((_, index) =>
    customAgent(`---\nname: t${index}\ndescription: Worker ${index}.\ntools: Glob\n---\nYou work.`),
  );
  const test = await createTestSession({
    policy,
    agents,
    session: {
      forkEnabled: true,
      maxBackgroundAgents: 8,
      ...(plan.maxTokens !== undefined ? { maxTokens: plan.maxTokens } : {}),
    },
  });
  live.session = test.session;
  const session = test.session;
  let budgetStops = 0;
  session.events.on((event) => {
    if (event.type === 'agent.cost') lastContext.set(event.agentId, totalTokens(event.usage));
    if (event.type === 'agent.failed' && event.code === 'BUDGET_EXCEEDED') budgetStops++;
  });
  try {
    const outcome = await session
      .send('build the tree', { waitForBackground: true })
      .catch((error: unknown) => error);
    if (outcome instanceof Error && !DelegateError.hasCode(outcome, 'BUDGET_EXCEEDED'))
      throw outcome;
    await session.flush();
    // Afterwards: each budget was overrun by at most the one request in flight when it ran out.
    const largest = Math.max(
      0,
      ...test.sim.journal.entries.map((entry) => totalTokens(entry.usage)),
    );
    const tree = session.usage();
    const spent = (node: AgentUsageNode) => totalTokens(node.treeUsage);
    if (plan.maxTokens !== undefined && spent(tree) > plan.maxTokens + largest)
      violations.push(`the tree spent ${spent(tree)} of ${plan.maxTokens}`);
    for (const child of tree.children) {
      const limit = child.budget.maxTokens;
      if (limit !== undefined && spent(child) > limit + largest)
        violations.push(`${child.description} spent ${spent(child)} of ${limit}`);
    }
  } finally {
    await test.cleanup();
  }
  return { violations, childRequests, budgetStops };
}

describe('budgets over random trees', () => {
  it('never lets an agent start a request that its own or its parent’s remaining budget cannot pay for', async () => {
    const totals = { childRequests: 0, budgetStops: 0 };
    await fc.assert(
      fc.asyncProperty(treePlan, async (plan) => {
        const result = await runTree(plan);
        expect(result.violations).toEqual([]);
        totals.childRequests += result.childRequests;
        totals.budgetStops += result.budgetStops;
      }),
      { numRuns: 12, seed: 1401 },
    );
    // The trees did real work and budgets really stopped some of them.
    expect(totals.childRequests).toBeGreaterThan(20);
    expect(totals.budgetStops).toBeGreaterThan(2);
  }, 120_000);
});
