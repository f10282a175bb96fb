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
