import { TOOL_NAMES } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import {
  GENERAL_PURPOSE_AGENT_TYPE,
  ONE_SHOT_BUILTIN_AGENT_TYPES,
  READ_ONLY_DISALLOWED_TOOLS,
} from './agent-types.js';
import { FORK_AGENT } from './fork-agent.js';
import { getBuiltInAgents } from './get-built-in-agents.js';

function byType(options?: Parameters<typeof getBuiltInAgents>[0]) {
  return new Map(getBuiltInAgents(options).map((agent) => [agent.agentType, agent]));
}

describe('built-in agents', () => {
  it('registers general-purpose, Explore and Plan, and not the fork definition', () => {
    expect(getBuiltInAgents().map((agent) => agent.agentType)).toEqual([
      'general-purpose',
      'Explore',
      'Plan',
    ]);
    expect(GENERAL_PURPOSE_AGENT_TYPE).toBe('general-purpose');
    expect([...ONE_SHOT_BUILTIN_AGENT_TYPES]).toEqual(['Explore', 'Plan']);
  });

  it('gives general-purpose every tool and no model of its own', () => {
    const agent = byType().get('general-purpose');
    expect(agent?.tools).toEqual(['*']);
    expect(agent?.model).toBeUndefined();
    expect(agent?.source).toBe('built-in');
    expect(agent?.getSystemPrompt()).toMatch(/report/i);
  });

  it('keeps Explore and Plan read-only and without project instruction files', () => {
    for (const type of ['Explore', 'Plan']) {
      const agent = byType().get(type);
      expect(agent?.disallowedTools).toEqual(
        expect.arrayContaining([
          TOOL_NAMES.agent,
          TOOL_NAMES.exitPlanMode,
          TOOL_NAMES.edit,
          TOOL_NAMES.write,
          TOOL_NAMES.notebookEdit,
        ]),
      );
      expect(agent?.disallowedTools).toHaveLength(READ_ONLY_DISALLOWED_TOOLS.length);
      expect(agent?.omitClaudeMd).toBe(true);
      expect(agent?.getSystemPrompt()).toMatch(/READ-ONLY/);
    }
  });

  it('runs Explore on haiku unless told otherwise, and Plan on the parent model', () => {
    expect(byType().get('Explore')?.model).toBe('haiku');
    expect(byType({ exploreModel: 'inherit' }).get('Explore')?.model).toBe('inherit');
    expect(byType().get('Plan')?.model).toBe('inherit');
  });

  it('asks Plan for a plan that ends with the critical files', () => {
    expect(byType().get('Plan')?.getSystemPrompt()).toMatch(
      /End the reply with a section titled "Critical files"/,
    );
  });

  it('returns fresh copies, so a caller changing one cannot change the next', () => {
    const first = getBuiltInAgents();
    first[0]?.tools?.push('Bash');
    first[1]?.disallowedTools?.push('Bash');
    first[2]?.disallowedTools?.push('Bash');
    const second = byType();
    expect(second.get('general-purpose')?.tools).toEqual(['*']);
    expect(second.get('Explore')?.disallowedTools).not.toContain('Bash');
    expect(second.get('Plan')?.disallowedTools).not.toContain('Bash');
  });

  it('defines the fork path to reuse the parent: every tool, its model, bubbling permissions, no prompt of its own', () => {
    expect(FORK_AGENT).toMatchObject({
      agentType: 'fork',
      tools: ['*'],
      maxTurns: 200,
      model: 'inherit',
      permissionMode: 'bubble',
      source: 'built-in',
    });
    expect(FORK_AGENT.getSystemPrompt()).toBe('');
  });
});
