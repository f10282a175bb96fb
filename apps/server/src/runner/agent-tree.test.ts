import { addUsage, completeUsage, costOfUsage, emptyUsage } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentTree, MAIN_AGENT_ID } from './agent-tree.js';

const facts = {
  colorOf: (type: string) => (type === 'reviewer' ? 'purple' : undefined),
  transcriptPathOf: (id: string) => `/t/${id}.jsonl`,
};
const time = '2026-12-01T00:00:00.000Z';
const usage = (input: number, output: number, read = 0, write = 0) =>
  completeUsage({
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: write,
  });

function tree() {
  const agentTree = new AgentTree({ runId: 'run_1', agents: [], facts });
  agentTree.startMain({
    agentType: 'main',
    description: 'do it',
    model: 'claude-sonnet-4-5',
    color: null,
    transcriptPath: '/t/main.jsonl',
  });
  return agentTree;
}

function started(agentId: string, mode: 'foreground' | 'background' | 'fork' = 'background') {
  return {
    kind: 'agent' as const,
    event: {
      type: 'agent.started' as const,
      agentId,
      timestamp: time,
      agentType: 'reviewer',
      description: 'review',
      mode,
      model: 'claude-haiku-4-5',
      taskId: `t-${agentId}`,
    },
  };
}

describe('AgentTree', () => {
  const usageArbitrary = fc.record({
    input: fc.nat(5_000),
    output: fc.nat(2_000),
    read: fc.nat(50_000),
    write: fc.nat(10_000),
  });

  it("sums the main agent's kept responses and prices them", () => {
    fc.assert(
      fc.property(fc.array(usageArbitrary, { maxLength: 20 }), (responses) => {
        const agentTree = tree();
        let expected = emptyUsage();
        for (const response of responses) {
          const value = usage(response.input, response.output, response.read, response.write);
          agentTree.apply({
            kind: 'main.response',
            usage: value,
            model: 'claude-sonnet-4-5',
            toolUses: [],
            text: 'ok',
          });
          expected = addUsage(expected, value);
        }
        const main = agentTree.get(MAIN_AGENT_ID)!;
        expect(main.usage).toEqual(expected);
        expect(main.costUsd).toBeCloseTo(costOfUsage(expected, 'claude-sonnet-4-5').costUsd, 12);
      }),
    );
  });

  it("shows a sub-agent's running total, then settles it on completion, across two runs", () => {
    const agentTree = tree();
    agentTree.apply(started('a1'));
    const live = usage(100, 10, 1_000);
    agentTree.apply({
      kind: 'agent',
      event: {
        type: 'agent.progress',
        agentId: 'a1',
        timestamp: time,
        messageCount: 1,
        toolUseCount: 1,
        tokens: 1_110,
        lastActivity: 'called Grep',
      },
      runUsage: live,
    });
    expect(agentTree.get('a1')).toMatchObject({
      usage: live,
      currentTool: 'Grep',
      toolUseCount: 1,
      color: 'purple',
      parentAgentId: MAIN_AGENT_ID,
      backgrounded: true,
    });
    const final = usage(150, 20, 1_000);
    agentTree.apply({
      kind: 'agent',
      event: {
        type: 'agent.completed',
        agentId: 'a1',
        timestamp: time,
        taskId: 't-a1',
        result: 'done',
        usage: final,
        durationMs: 5,
        toolUseCount: 1,
      },
    });
    expect(agentTree.get('a1')).toMatchObject({
      status: 'completed',
      usage: final,
      currentTool: null,
    });
    // A second run of the same agent (a continuation) adds to what it used before.
    agentTree.apply(started('a1'));
    const stopped = usage(40, 4);
    agentTree.apply({
      kind: 'agent',
      event: {
        type: 'agent.failed',
        agentId: 'a1',
        timestamp: time,
        taskId: 't-a1',
        error: 'stopped',
        code: 'ABORTED',
      },
      runUsage: stopped,
    });
    const record = agentTree.get('a1')!;
    expect(record.status).toBe('cancelled');
    expect(record.usage).toEqual(addUsage(final, stopped));
    expect(record.costUsd).toBeCloseTo(costOfUsage(record.usage, 'claude-haiku-4-5').costUsd, 12);
  });

  it('marks a moved agent backgrounded and a failure that is not a stop as failed', () => {
    const agentTree = tree();
    agentTree.apply(started('a2', 'foreground'));
    agentTree.apply({
      kind: 'agent',
      event: { type: 'agent.backgrounded', agentId: 'a2', timestamp: time, taskId: 't-a2' },
    });
    expect(agentTree.get('a2')).toMatchObject({ mode: 'foreground', backgrounded: true });
    agentTree.apply({
      kind: 'agent',
      event: {
        type: 'agent.failed',
        agentId: 'a2',
        timestamp: time,
        error: 'API error',
        code: 'API_ERROR',
      },
    });
    expect(agentTree.get('a2')).toMatchObject({ status: 'failed', error: 'API error' });
  });

  it('ends every running agent with the run, and keeps large tool inputs out of the log', () => {
    const agentTree = tree();
    agentTree.apply(started('a3'));
    const change = agentTree.apply({
      kind: 'agent',
      event: {
        type: 'agent.tool_use',
        agentId: 'a3',
        timestamp: time,
        toolName: 'Write',
        toolUseId: 'tu1',
        input: { content: 'x'.repeat(10_000) },
      },
    });
    expect(JSON.stringify(change.events[0]).length).toBeLessThan(5_000);
    expect(agentTree.get('a3')?.currentTool).toBe('Write');
    const finished = agentTree.finish({
      status: 'interrupted',
      mainStatus: 'interrupted',
      error: 'server stopped',
    });
    expect(finished.agents.map((agent) => [agent.agentId, agent.status])).toEqual([
      [MAIN_AGENT_ID, 'interrupted'],
      ['a3', 'interrupted'],
    ]);
    expect(finished.events.every((event) => event.type === 'agent.status')).toBe(true);
  });
});

describe('AgentTree with the runtime’s agent.cost figures', () => {
  const costEvent = (agentId: string, total: ReturnType<typeof usage>) => ({
    kind: 'agent' as const,
    event: {
      type: 'agent.cost' as const,
      agentId,
      timestamp: time,
      usage: total,
      totalUsage: total,
      costUsd: 0.1,
      treeCostUsd: 0.1,
      priced: true,
      remaining: { tokens: 500 },
      sessionRemaining: { tokens: 900 },
    },
  });

  it('uses the runtime total and does not add a completed run on top of it', () => {
    const agentTree = tree();
    agentTree.apply(started('a1'));
    const total = usage(100, 10, 2_000);
    const change = agentTree.apply(costEvent('a1', total));
    // The event is logged (budget left included) with the server's own usage event.
    expect(change.events.map((event) => event.type)).toEqual(['agent.cost', 'agent.usage']);
    agentTree.apply({
      kind: 'agent',
      event: {
        type: 'agent.completed',
        agentId: 'a1',
        timestamp: time,
        taskId: 't-a1',
        result: 'done',
        usage: total,
        costUsd: 0.1,
        durationMs: 5,
        toolUseCount: 0,
      },
    });
    expect(agentTree.get('a1')?.usage).toEqual(total);
    expect(agentTree.get('a1')?.costUsd).toBeCloseTo(
      costOfUsage(total, 'claude-haiku-4-5').costUsd,
      12,
    );
  });

  it('adds what earlier workers stored to the runtime total of this one', () => {
    const before = usage(7, 3);
    const stored = tree().list()[0]!;
    const agentTree = new AgentTree({
      runId: 'run_1',
      agents: [{ ...stored, usage: before }],
      facts,
    });
    agentTree.apply(costEvent(MAIN_AGENT_ID, usage(10, 1)));
    agentTree.apply({
      kind: 'main.response',
      usage: usage(10, 1),
      model: 'claude-sonnet-4-5',
      toolUses: [],
      text: 'hi',
    });
    expect(agentTree.get(MAIN_AGENT_ID)?.usage).toEqual(addUsage(before, usage(10, 1)));
  });
});

describe('AgentTree.settleFinished', () => {
  const interruptedTree = () => {
    const agentTree = tree();
    agentTree.apply(started('a1'));
    agentTree.finish({
      status: 'interrupted',
      mainStatus: 'interrupted',
      error: 'The server stopped while this run was working.',
    });
    return agentTree;
  };

  it('ends an interrupted agent as its notification says, with an error telling how it ended instead of the interruption', () => {
    const failed = interruptedTree().settleFinished('a1', 'failed');
    expect(failed.agents[0]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^The agent had failed before its worker stopped/),
    });
    expect(failed.events).toEqual([
      { type: 'agent.status', agentId: 'a1', status: 'failed', error: failed.agents[0]!.error },
    ]);
    const stopped = interruptedTree().settleFinished('a1', 'killed');
    expect(stopped.agents[0]).toMatchObject({
      status: 'cancelled',
      error: expect.stringMatching(/^The agent was stopped before its worker stopped/),
    });
    const completed = interruptedTree().settleFinished('a1', 'completed');
    expect(completed.agents[0]).toMatchObject({ status: 'completed', error: null });
    expect(completed.events).toEqual([
      { type: 'agent.status', agentId: 'a1', status: 'completed' },
    ]);
  });

  it('leaves an agent that is not interrupted as it is', () => {
    const agentTree = tree();
    agentTree.apply(started('a1'));
    expect(agentTree.settleFinished('a1', 'failed')).toEqual({ agents: [], events: [] });
    expect(agentTree.get('a1')?.status).toBe('running');
  });
});

describe('AgentTree event log', () => {
  it('logs warnings and cache-evictable hints, and leaves sub-agent messages to the transcripts', () => {
    const agentTree = tree();
    agentTree.apply(started('a1'));
    const logged = (event: Parameters<AgentTree['apply']>[0]) =>
      agentTree.apply(event).events.map((stored) => stored.type);
    const base = { agentId: 'a1', timestamp: time };
    expect(
      logged({
        kind: 'agent',
        event: { ...base, type: 'agent.warning', code: 'HOOK_FAILED', message: 'hook failed' },
      }),
    ).toEqual(['agent.warning']);
    expect(
      logged({
        kind: 'agent',
        event: { ...base, type: 'agent.cache_evictable', lastRequestId: 'req_1' },
      }),
    ).toEqual(['agent.cache_evictable']);
    expect(
      logged({
        kind: 'agent',
        event: {
          ...base,
          type: 'agent.message',
          message: {
            type: 'user',
            uuid: '00000000-0000-4000-8000-000000000000',
            timestamp: time,
            message: { role: 'user', content: 'hi' },
          },
        },
      }),
    ).toEqual([]);
  });
});
