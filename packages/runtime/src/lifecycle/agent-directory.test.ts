import { describe, expect, it } from 'vitest';
import { emptyUsage } from '@delegate/core';
import type { AgentRecord } from './agent-record.js';
import { AgentDirectory, isCompacted } from './agent-directory.js';
import { beginRun, endRun } from './record-transitions.js';

function record(
  agentId: string,
  options: { name?: string; parentAgentId?: string } = {},
): AgentRecord {
  return {
    agentId,
    agentType: 'general-purpose',
    description: `job ${agentId}`,
    isFork: false,
    isBuiltIn: true,
    systemPrompt: ['a long prompt'],
    model: 'm',
    querySource: 'q',
    canUseTool: async () => ({ behavior: 'allow' }),
    context: {} as AgentRecord['context'],
    messages: [],
    inbox: [],
    status: 'running',
    isBackground: true,
    usage: emptyUsage(),
    costUsd: 0,
    spec: {} as AgentRecord['spec'],
    ...options,
  };
}

function run(
  directory: AgentDirectory,
  agent: AgentRecord,
  outcome: 'completed' | 'failed' = 'completed',
) {
  beginRun(agent, `t-${agent.agentId}`);
  directory.runStarted(agent);
  endRun(agent, outcome);
  directory.runEnded(agent);
}

describe('AgentDirectory', () => {
  it('keeps the last finished records whole and compacts older ones to a summary', () => {
    const directory = new AgentDirectory({ maxRetained: 2 });
    const agents = ['a1', 'a2', 'a3'].map((id) => record(id, { name: `name-${id}` }));
    for (const agent of agents) {
      directory.add(agent);
      run(directory, agent);
    }
    const oldest = directory.get('a1')!;
    expect(isCompacted(oldest)).toBe(true);
    expect(oldest).toEqual({
      compacted: true,
      agentId: 'a1',
      name: 'name-a1',
      agentType: 'general-purpose',
      description: 'job a1',
      status: 'idle',
      taskId: 't-a1',
      usage: expect.objectContaining({ input_tokens: 0, output_tokens: 0 }),
    });
    expect(directory.get('name-a1')).toBe(oldest);
    expect(directory.get('a2')).toBe(agents[1]);
    expect(directory.get('a3')).toBe(agents[2]);
    expect(directory.retainedFinished).toBe(2);
  });

  it('makes a compacted record whole again when it runs again', () => {
    const directory = new AgentDirectory({ maxRetained: 0 });
    const agent = record('a1', { name: 'keeper' });
    directory.add(agent);
    run(directory, agent);
    expect(isCompacted(directory.get('keeper')!)).toBe(true);
    beginRun(agent, 't-again');
    directory.runStarted(agent);
    expect(directory.get('a1')).toBe(agent);
    expect(directory.get('keeper')).toBe(agent);
  });

  it('counts running children per parent, once per run', () => {
    const directory = new AgentDirectory({ maxRetained: 10 });
    const first = record('c1', { parentAgentId: 'p' });
    const second = record('c2', { parentAgentId: 'p' });
    for (const child of [first, second]) {
      directory.add(child);
      beginRun(child, 't');
      directory.runStarted(child);
      directory.runStarted(child);
    }
    expect(directory.hasRunningChildren('p')).toBe(true);
    endRun(first, 'completed');
    directory.runEnded(first);
    directory.runEnded(first);
    expect(directory.hasRunningChildren('p')).toBe(true);
    endRun(second, 'failed');
    directory.runEnded(second);
    expect(directory.hasRunningChildren('p')).toBe(false);
  });
});

describe('AgentDirectory names', () => {
  const noTasks = { isTaskId: () => false };

  it('refuses a name already held, being claimed, equal to an agent id or to a task id', () => {
    const directory = new AgentDirectory({ maxRetained: 1 });
    directory.add(record('worker-id', { name: 'worker' }));
    expect(() => directory.claimName('worker', noTasks)).toThrow(
      'Agent name "worker" is already taken in this session by agent worker-id (general-purpose)',
    );
    expect(() => directory.claimName('worker-id', noTasks)).toThrow(
      'Agent name "worker-id" is the id of another agent in this session',
    );
    expect(() => directory.claimName('t1', { isTaskId: (id) => id === 't1' })).toThrow(
      'is the id of a task in this session',
    );
    const claim = directory.claimName('builder', noTasks);
    expect(() => directory.claimName('builder', noTasks)).toThrow('by an agent that is starting');
    claim.release();
    expect(() => directory.claimName('builder', noTasks).release()).not.toThrow();
  });

  it('keeps a compacted agent holding its name, and never lets another record take it', () => {
    const directory = new AgentDirectory({ maxRetained: 0 });
    const first = record('first', { name: 'worker' });
    directory.add(first);
    run(directory, first);
    expect(isCompacted(directory.get('worker')!)).toBe(true);
    expect(() => directory.claimName('worker', noTasks)).toThrow('already taken');
    // A resumed record from elsewhere that carries the same name does not take it over.
    directory.add(record('other', { name: 'worker' }));
    expect(directory.get('worker')!.agentId).toBe('first');
  });
});

describe('AgentDirectory summaries', () => {
  function withReport(agent: AgentRecord, text: string): AgentRecord {
    return {
      ...agent,
      messages: [
        {
          type: 'assistant',
          uuid: `u-${agent.agentId}`,
          timestamp: new Date(0).toISOString(),
          message: {
            id: 'm',
            role: 'assistant',
            model: 'm',
            content: [{ type: 'text', text }],
            stop_reason: 'end_turn',
            usage: { input_tokens: 10, output_tokens: 5 },
          },
        },
      ] as AgentRecord['messages'],
    };
  }

  it('keep id, type, status, usage and the capped report, and are forgotten past maxSummaries', () => {
    const directory = new AgentDirectory({ maxRetained: 0, maxSummaries: 2 });
    const agents = ['a', 'b', 'c'].map((id) =>
      withReport(
        record(id, { name: `n-${id}` }),
        id === 'a' ? 'x'.repeat(200_000) : `report ${id}`,
      ),
    );
    for (const agent of agents) {
      directory.add(agent);
      run(directory, agent);
    }
    // The oldest summary is forgotten; its name stays taken.
    expect(directory.get('a')).toBeUndefined();
    expect(directory.get('n-a')).toBeUndefined();
    expect(() => directory.claimName('n-a', { isTaskId: () => false })).toThrow(
      'finished long ago',
    );
    expect(directory.retainedSummaries).toBe(2);
    const summary = directory.get('n-b');
    expect(summary).toMatchObject({
      compacted: true,
      agentId: 'b',
      agentType: 'general-purpose',
      status: 'idle',
      result: 'report b',
      usage: expect.objectContaining({ input_tokens: 10, output_tokens: 5 }),
    });
    const big = new AgentDirectory({ maxRetained: 0 });
    const long = withReport(record('long'), 'x'.repeat(200_000));
    big.add(long);
    run(big, long);
    const compacted = big.get('long')!;
    expect(isCompacted(compacted)).toBe(true);
    expect((compacted as { result: string }).result.length).toBeLessThan(100_200);
  });
});
