import picocolors from 'picocolors';
import { describe, expect, it } from 'vitest';
import { AgentTree } from '../usage/agent-tree.js';
import stringWidth from 'string-width';
import { cut, renderTree } from './render-tree.js';

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

  it('offers Ctrl-B only while a foreground sub-agent runs, not after it went to the background', () => {
    const tree = sampleTree();
    const render = () => renderTree(tree, { colors: plain, width: 200, now: 5_000, frame: 0 });
    expect(render().at(-1)).toContain('Ctrl-B: background the running agent · Ctrl-C: stop');
    tree.handleEvent({ type: 'agent.backgrounded', agentId: 'a1', timestamp: '', taskId: 't1' });
    expect(render()[1]).toContain('[background]');
    expect(render().at(-1)).not.toContain('Ctrl-B');
    expect(render().at(-1)).toMatch(/ · Ctrl-C: stop$/);
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

  it('never lets a description or error with wide or control characters reach past the width or the terminal', () => {
    const tree = sampleTree();
    tree.handleEvent({
      type: 'agent.started',
      agentId: 'a3',
      timestamp: '',
      agentType: 'general-purpose',
      description: '检查数据库迁移脚本 🚀🚀 \u001b]0;pwned\u0007 \u001b[2J',
      mode: 'background',
      model: 'm',
    });
    for (const width of [20, 37, 60, 200]) {
      const lines = renderTree(tree, { colors: plain, width, now: 5_000, frame: 1 });
      for (const line of lines) expect(stringWidth(line)).toBeLessThan(width);
      const text = lines.join('\n');
      expect(text).not.toContain('\u001b');
      expect(text).not.toContain('\u0007');
    }
    const wide = renderTree(tree, { colors: plain, width: 200, now: 5_000, frame: 1 });
    expect(wide.find((line) => line.includes('检查'))).toContain(
      '"检查数据库迁移脚本 🚀🚀 ?]0;pwned? ?[2J"',
    );
  });
});

describe('cut', () => {
  it('keeps a line that fits, and cuts a longer one to one column less than the width, ending in an ellipsis', () => {
    expect(cut('short line', 20)).toBe('short line');
    expect(cut('x'.repeat(30), 20)).toBe(`${'x'.repeat(18)}…`);
    expect(stringWidth(cut('├─ ⠋ 检查数据库迁移脚本检查数据库迁移脚本', 20))).toBeLessThanOrEqual(
      19,
    );
    expect(cut('├─ ⠋ 检查数据库迁移脚本检查数据库迁移脚本', 20)).toBe('├─ ⠋ 检查数据库迁…');
  });

  it('counts color escapes as no columns and closes the color when it cuts', () => {
    const red = picocolors.createColors(true).red;
    const line = `${red('a'.repeat(10))} ${'b'.repeat(20)}`;
    const cutLine = cut(line, 16);
    expect(stringWidth(cutLine)).toBe(15);
    expect(cutLine.endsWith('…\u001b[0m')).toBe(true);
    expect(cutLine.startsWith('\u001b[31m')).toBe(true);
    expect(cut(red('fits'), 10)).toBe(red('fits'));
  });

  it('prints a stray escape or other control character as ?, in lines that fit and lines it cuts', () => {
    expect(cut('a\u001bb\u0007c', 20)).toBe('a?b?c');
    expect(cut(`${'x'.repeat(10)}\u001b]0;t\u0007${'y'.repeat(40)}`, 20)).toBe(
      `${'x'.repeat(10)}?]0;t?yy…`,
    );
    expect(cut(`${'x'.repeat(10)}\u001b${'y'.repeat(40)}`, 20)).toBe(`${'x'.repeat(10)}?yyyyyyy…`);
  });

  it("measures wide shapes that are not the tree's own marks", () => {
    // ◾ (U+25FE) is two columns wide, though it sits among the geometric shapes.
    const line = cut('◾'.repeat(15), 20);
    expect(stringWidth(line)).toBeLessThanOrEqual(19);
    expect(line).toBe(`${'◾'.repeat(9)}…`);
    expect(cut('├─ ■ ✓ ✗ ⠋ · …', 20)).toBe('├─ ■ ✓ ✗ ⠋ · …');
  });
});
