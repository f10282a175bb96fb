import picocolors from 'picocolors';
import { describe, expect, it } from 'vitest';
import { AgentTree } from '../usage/agent-tree.js';
import { renderTree } from './render-tree.js';

const plain = picocolors.createColors(false);

function sampleTree(): AgentTree {
  let now = 1_000;
  const tree = new AgentTree({ mainModel: 'claude-sonnet-5-5', now: () => now });
  tree.setMainStatus('running');
  for (const [agentId, agentType, mode] of [
    ['a1', 'fork', 'fork'],
    ['a2', 'reviewer', 'background'],
  ] as const) {
    tree.handleEvent({
      type: 'agent.started',
      agentId,
      timestamp: '',
      agentType,
      description: `job ${agentId}`,
      mode,
      model: 'm',
      ...(agentType === 'reviewer' ? { color: 'green' as const } : {}),
    });
  }
  tree.handleEvent({
    type: 'agent.tool_use',
    agentId: 'a1',
    timestamp: '',
    toolName: 'Grep',
    toolUseId: 't',
    input: {},
  });
  now = 4_200;
  tree.handleEvent({
    type: 'agent.completed',
    agentId: 'a2',
    timestamp: '',
    result: 'ok',
    usage: { input_tokens: 0, output_tokens: 0 },
    durationMs: 3_200,
    toolUseCount: 0,
  });
  return tree;
}

describe('renderTree', () => {
  it('draws the main agent and each sub-agent under it with mode, tool or outcome, tokens and elapsed time', () => {
    const lines = renderTree(sampleTree(), { colors: plain, width: 200, now: 5_000, frame: 0 });
    expect(lines[0]).toMatch(/^⠋ main · 4\.0s · 0 read · 0 written · 0 uncached · \$0$/);
    expect(lines[1]).toMatch(/^├─ ⠋ fork "job a1" \[fork\] · Grep · 4\.0s · 0 read/);
    expect(lines[2]).toMatch(/^└─ ✓ reviewer "job a2" \[background\] · done in 3\.2s/);
    expect(lines[3]).toContain('Ctrl-B');
    expect(lines.join('\n')).not.toContain('\u001b[');
    expect(
      renderTree(sampleTree(), { colors: plain, width: 200, now: 5_000, frame: 0, final: true }).at(
        -1,
      ),
    ).not.toContain('Ctrl-B');
  });

  it('colors an agent by its definition and cuts lines to the terminal width', () => {
    const colored = renderTree(sampleTree(), {
      colors: picocolors.createColors(true),
      width: 200,
      now: 5_000,
      frame: 0,
    });
    expect(colored[2]).toContain('\u001b[32m');
    // general-purpose and forks have no color of their own.
    expect(colored[1]).not.toContain('\u001b[32m');
    for (const line of renderTree(sampleTree(), {
      colors: plain,
      width: 30,
      now: 5_000,
      frame: 3,
    })) {
      expect([...line].length).toBeLessThanOrEqual(30);
    }
  });
});
