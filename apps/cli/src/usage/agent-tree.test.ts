import { type AssistantMessage, costOfUsage, createUserMessage } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { AgentTree, MAIN_AGENT_ID } from './agent-tree.js';

function assistant(
  usage: AssistantMessage['message']['usage'],
  toolName?: string,
): AssistantMessage {
  return {
    type: 'assistant',
    uuid: `u-${Math.random()}`,
    timestamp: new Date().toISOString(),
    message: {
      id: 'msg_1',
      role: 'assistant',
      model: 'claude-sonnet-5-5',
      stop_reason: toolName ? 'tool_use' : 'end_turn',
      usage,
      content: toolName
        ? [{ type: 'tool_use', id: 'tu_1', name: toolName, input: {} }]
        : [{ type: 'text', text: 'done' }],
    },
  };
}

const started = (agentId: string, parentAgentId?: string) => ({
  type: 'agent.started' as const,
  agentId,
  timestamp: new Date().toISOString(),
  agentType: 'general-purpose',
  description: `work ${agentId}`,
  mode: 'foreground' as const,
  model: 'claude-sonnet-5-5',
  ...(parentAgentId ? { parentAgentId } : {}),
});

describe('AgentTree', () => {
  it('sums usage per agent from the responses it kept and prices each agent', () => {
    const tree = new AgentTree({ mainModel: 'claude-sonnet-5-5' });
    tree.handleEvent(started('a1'));
    const first = {
      input_tokens: 10,
      output_tokens: 20,
      cache_creation_input_tokens: 1_000,
      cache_read_input_tokens: 0,
    };
    const second = {
      input_tokens: 5,
      output_tokens: 30,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 1_000,
    };
    tree.handleEvent({
      type: 'agent.message',
      agentId: 'a1',
      timestamp: '',
      message: assistant(first, 'Read'),
    });
    tree.handleEvent({
      type: 'agent.message',
      agentId: 'a1',
      timestamp: '',
      message: assistant(second),
    });
    tree.addMainMessage(assistant({ input_tokens: 1, output_tokens: 2 }));
    const node = tree.get('a1')!;
    expect(node.usage).toMatchObject({
      input_tokens: 15,
      output_tokens: 50,
      cache_creation_input_tokens: 1_000,
      cache_read_input_tokens: 1_000,
    });
    expect(node.costUsd).toBeCloseTo(costOfUsage(node.usage, 'claude-sonnet-5-5').costUsd, 12);
    expect(node.toolUseCount).toBe(1);
    const totals = tree.totals();
    expect(totals.usage.output_tokens).toBe(52);
    expect(totals.costUsd).toBeCloseTo(node.costUsd + tree.main.costUsd, 12);
  });

  it('places sub-agents under their parent and tracks tool, status and mode', () => {
    const tree = new AgentTree({ mainModel: 'm' });
    tree.handleEvent(started('a1'));
    tree.handleEvent(started('a2', 'a1'));
    tree.handleEvent(started('a3'));
    expect(tree.nodes().map((node) => node.agentId)).toEqual([MAIN_AGENT_ID, 'a1', 'a2', 'a3']);
    expect(tree.depth('a2')).toBe(2);
    tree.handleEvent({
      type: 'agent.tool_use',
      agentId: 'a2',
      timestamp: '',
      toolName: 'Grep',
      toolUseId: 't',
      input: {},
    });
    expect(tree.get('a2')?.currentTool).toBe('Grep');
    tree.handleEvent({
      type: 'agent.message',
      agentId: 'a2',
      timestamp: '',
      message: createUserMessage({
        content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }],
      }),
    });
    expect(tree.get('a2')?.currentTool).toBeUndefined();
    tree.handleEvent({ type: 'agent.backgrounded', agentId: 'a1', timestamp: '', taskId: 't1' });
    expect(tree.get('a1')?.mode).toBe('background');
    tree.handleEvent({
      type: 'agent.failed',
      agentId: 'a3',
      timestamp: '',
      error: 'stopped',
      code: 'ABORTED',
    });
    tree.handleEvent({ type: 'agent.failed', agentId: 'a2', timestamp: '', error: 'boom' });
    expect(tree.get('a3')?.status).toBe('killed');
    expect(tree.get('a2')).toMatchObject({ status: 'failed', error: 'boom' });
  });

  it('says when a model has no price instead of showing a wrong cost', () => {
    const tree = new AgentTree({ mainModel: 'local-llama', prices: {} });
    tree.addMainMessage({
      ...assistant({ input_tokens: 100, output_tokens: 100 }),
      message: {
        ...assistant({ input_tokens: 100, output_tokens: 100 }).message,
        model: 'local-llama',
      },
    });
    expect(tree.main.priced).toBe(false);
    expect(tree.totals()).toMatchObject({ costUsd: 0, priced: false });
  });
});

describe('AgentTree main-agent turns', () => {
  it('times each turn of the main agent from its own start', () => {
    let now = 1_000;
    const tree = new AgentTree({ mainModel: 'm', now: () => now });
    tree.setMainStatus('running');
    now = 3_000;
    tree.setMainStatus('completed');
    now = 10_000;
    tree.setMainStatus('running');
    expect(tree.main.startedAt).toBe(10_000);
    expect(tree.main.endedAt).toBeUndefined();
  });
});

describe('AgentTree with the runtime’s figures', () => {
  it('takes agent.cost totals as they come and does not add the same response again', () => {
    const tree = new AgentTree({ mainModel: 'claude-sonnet-5-5' });
    tree.handleEvent(started('a1'));
    const usage = { input_tokens: 10, output_tokens: 20 };
    const cost = (totalUsage: typeof usage, costUsd: number) => ({
      type: 'agent.cost' as const,
      agentId: 'a1',
      timestamp: '',
      usage,
      totalUsage,
      costUsd,
      treeCostUsd: costUsd,
      priced: true,
      remaining: { tokens: 70 },
      sessionRemaining: {},
    });
    // The runtime reports a response's cost before the message itself arrives.
    tree.handleEvent(cost(usage, 0.5));
    tree.handleEvent({
      type: 'agent.message',
      agentId: 'a1',
      timestamp: '',
      message: assistant(usage),
    });
    expect(tree.get('a1')).toMatchObject({
      costUsd: 0.5,
      usage: { input_tokens: 10, output_tokens: 20 },
    });
    tree.handleEvent(cost({ input_tokens: 20, output_tokens: 40 }, 1));
    tree.handleEvent({
      type: 'agent.message',
      agentId: 'a1',
      timestamp: '',
      message: assistant(usage),
    });
    expect(tree.get('a1')).toMatchObject({
      costUsd: 1,
      usage: { input_tokens: 20, output_tokens: 40 },
    });
    expect(tree.totals().costUsd).toBe(1);
  });

  it('gives the main agent the runtime’s figures too', () => {
    const tree = new AgentTree({ mainModel: 'claude-sonnet-5-5' });
    tree.handleEvent({
      type: 'agent.cost',
      agentId: MAIN_AGENT_ID,
      timestamp: '',
      usage: { input_tokens: 3, output_tokens: 4 },
      totalUsage: { input_tokens: 3, output_tokens: 4 },
      costUsd: 0.25,
      treeCostUsd: 0.25,
      priced: true,
      remaining: {},
      sessionRemaining: {},
    });
    tree.addMainMessage(assistant({ input_tokens: 3, output_tokens: 4 }));
    expect(tree.main.usage.input_tokens).toBe(3);
    expect(tree.main.costUsd).toBe(0.25);
  });
});
