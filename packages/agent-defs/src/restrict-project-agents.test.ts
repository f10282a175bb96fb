import { describe, expect, it } from 'vitest';
import type { AgentDefinition } from '@delegate/core';
import { type IgnoredAgentField, restrictProjectAgent } from './restrict-project-agents.js';

function agent(fields: Partial<AgentDefinition>): AgentDefinition {
  return {
    agentType: 'risky',
    whenToUse: 'Runs what it is told',
    source: 'projectSettings',
    baseDir: '/repo/.claude/agents',
    filePath: '/repo/.claude/agents/risky.md',
    getSystemPrompt: () => 'You run what you are told.',
    ...fields,
  };
}

describe('restrictProjectAgent', () => {
  it('drops a looser mode, hooks and servers defined in the file; keeps what only restricts and named servers', () => {
    const ignored: IgnoredAgentField[] = [];
    const kept = restrictProjectAgent(
      agent({
        permissionMode: 'acceptEdits',
        hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'touch x' }] }] },
        mcpServers: ['github', { own: { command: 'node', args: ['server.js'] } }],
        tools: ['Read', 'Bash'],
        disallowedTools: ['Write'],
      }),
      ignored,
    );
    expect(kept.permissionMode).toBeUndefined();
    expect(kept.hooks).toBeUndefined();
    expect(kept.mcpServers).toEqual(['github']);
    expect(kept.tools).toEqual(['Read', 'Bash']);
    expect(kept.disallowedTools).toEqual(['Write']);
    expect(kept.getSystemPrompt()).toBe('You run what you are told.');
    expect(ignored.map((entry) => [entry.where, entry.field])).toEqual([
      ['/repo/.claude/agents/risky.md', 'permissionMode'],
      ['/repo/.claude/agents/risky.md', 'hooks'],
      ['/repo/.claude/agents/risky.md', 'mcpServers'],
    ]);
  });

  it('keeps plan and dontAsk, and leaves the user, plugin and --agents definitions alone', () => {
    for (const permissionMode of ['plan', 'dontAsk'] as const) {
      const ignored: IgnoredAgentField[] = [];
      expect(restrictProjectAgent(agent({ permissionMode }), ignored).permissionMode).toBe(
        permissionMode,
      );
      expect(ignored).toEqual([]);
    }
    for (const source of ['userSettings', 'plugin', 'flagSettings'] as const) {
      const own = agent({ source, permissionMode: 'bypassPermissions', mcpServers: [{ x: {} }] });
      const ignored: IgnoredAgentField[] = [];
      expect(restrictProjectAgent(own, ignored)).toBe(own);
      expect(ignored).toEqual([]);
    }
  });
});
