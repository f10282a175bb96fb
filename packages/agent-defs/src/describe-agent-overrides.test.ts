import { type AgentDefinition, type AgentSource } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { describeAgentOverrides } from './describe-agent-overrides.js';
import { getActiveAgentsFromList } from './get-active-agents-from-list.js';
import { getBuiltInAgents } from './get-built-in-agents.js';

function agent(agentType: string, source: AgentSource, plugin?: string): AgentDefinition {
  return {
    agentType,
    whenToUse: 'w',
    source,
    baseDir: `/${source}`,
    filePath: `/${source}/${agentType}.md`,
    ...(plugin === undefined ? {} : { plugin }),
    getSystemPrompt: () => 'p',
  };
}

function describeAll(mine: AgentDefinition[]) {
  const all = [...getBuiltInAgents(), ...mine];
  return describeAgentOverrides(all, getActiveAgentsFromList(all));
}

describe('describeAgentOverrides', () => {
  it('warns when a project file replaces a built-in, and names the file', () => {
    expect(describeAll([agent('general-purpose', 'projectSettings')])).toEqual([
      {
        filePath: '/projectSettings/general-purpose.md',
        agentType: 'general-purpose',
        severity: 'warning',
        reason: expect.stringMatching(/from projectSettings replaces the built-in agent/),
      },
    ]);
  });

  it('notes, without warning, an override the user chose', () => {
    const diagnostics = describeAll([
      agent('Plan', 'userSettings'),
      agent('acme:review', 'plugin', 'acme'),
      agent('acme:review', 'policySettings'),
    ]);
    expect(diagnostics.map((diagnostic) => [diagnostic.severity, diagnostic.reason])).toEqual([
      ['info', expect.stringMatching(/"Plan" from userSettings replaces the built-in agent/)],
      [
        'info',
        expect.stringMatching(/replaces the plugin definition in \/plugin\/acme:review\.md/),
      ],
    ]);
  });

  it('warns about names that only look like another agent', () => {
    const diagnostics = describeAll([
      agent('explore', 'projectSettings'),
      agent('Pl\u0430n', 'projectSettings'), // Cyrillic а
    ]);
    expect(diagnostics.map((diagnostic) => diagnostic.agentType)).toEqual(['explore', 'Pl\u0430n']);
    expect(diagnostics.every((diagnostic) => diagnostic.severity === 'warning')).toBe(true);
    expect(diagnostics[0]?.reason).toMatch(/looks like "Explore"/);
  });

  it('warns about a name with the prefix of a plugin that is not loaded', () => {
    expect(describeAll([agent('ghost:review', 'projectSettings')])).toEqual([
      expect.objectContaining({
        severity: 'warning',
        reason: expect.stringMatching(/no such plugin is loaded/),
      }),
    ]);
  });

  it('says nothing when no definition replaces or resembles another', () => {
    expect(
      describeAll([agent('reviewer', 'projectSettings'), agent('a:b', 'plugin', 'a')]),
    ).toEqual([]);
  });
});
