import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { customAgent } from '../__fixtures__/sim-helpers.js';
import { forkPrompts, freshAgentPrompts } from './agent-prompts.js';

const parentParts = {
  systemPrompt: ['parent prompt'],
  userContext: { projectInstructions: 'lint first', notes: 'shared' },
  toolDefinitions: [],
};

describe('agent prompts', () => {
  it("gives a fork its parent's exact prompt and contexts, and refuses one without them", () => {
    expect(forkPrompts(parentParts)).toEqual({
      systemPrompt: ['parent prompt'],
      userContext: { projectInstructions: 'lint first', notes: 'shared' },
    });
    expect(() => forkPrompts(undefined)).toThrow(DelegateError);
  });

  it("puts the memory section into a fresh agent's prompt and drops project instructions for omitClaudeMd", () => {
    const agent = customAgent(
      '---\nname: reader\ndescription: reads\nomitClaudeMd: true\n---\nYou read.',
    );
    const prompts = freshAgentPrompts({
      agent,
      cwd: '/repo',
      model: 'm',
      memoryPrompt: '# Memory\nnotes here',
      parentParts,
      additionalWorkingDirectories: ['/home/me/.claude/agent-memory/reader'],
    });
    expect(prompts.systemPrompt[0]).toBe('You read.\n\n# Memory\nnotes here');
    expect(prompts.systemPrompt.at(-1)).toContain('/home/me/.claude/agent-memory/reader');
    expect(prompts.userContext).toEqual({ notes: 'shared' });
  });
});
