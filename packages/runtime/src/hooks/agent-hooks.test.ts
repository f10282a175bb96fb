import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { customAgent } from '../__fixtures__/sim-helpers.js';
import { hookMatches, parseAgentHooks } from './agent-hooks.js';

function agentWithHooks(hooks: string) {
  return customAgent(
    `---\nname: guarded\ndescription: has hooks\nhooks:\n${hooks}\n---\nYou are guarded.`,
  );
}

describe('parseAgentHooks', () => {
  it('reads PreToolUse and PostToolUse in the shape Claude Code settings use', () => {
    const agent = agentWithHooks(
      [
        '  PreToolUse:',
        '    - matcher: "Bash"',
        '      hooks:',
        '        - type: command',
        '          command: ./check.sh',
        '          timeout: 5',
        '  PostToolUse:',
        '    - hooks:',
        '        - type: command',
        '          command: echo done',
        '  Stop:',
        '    - hooks:',
        '        - type: command',
        '          command: echo stop',
      ].join('\n'),
    );
    const parsed = parseAgentHooks(agent);
    expect(parsed.hooks.PreToolUse).toEqual([
      { matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh', timeout: 5 }] },
    ]);
    expect(parsed.hooks.PostToolUse[0]?.hooks[0]?.command).toBe('echo done');
    expect(parsed.ignoredEvents).toEqual(['Stop']);
  });

  it('refuses a guard it cannot run, naming the agent, the file and the place', () => {
    const badType = agentWithHooks(
      [
        '  PreToolUse:',
        '    - matcher: Bash',
        '      hooks:',
        '        - type: prompt',
        '          prompt: is this safe?',
      ].join('\n'),
    );
    expect(() => parseAgentHooks(badType)).toThrow(
      /guarded.*\/virtual\/agent\.md.*hooks\.PreToolUse\[0\]\.hooks\[0\]\.type/,
    );
    const badPattern = agentWithHooks(
      [
        '  PreToolUse:',
        '    - matcher: "Bash("',
        '      hooks:',
        '        - type: command',
        '          command: x',
      ].join('\n'),
    );
    let error: unknown;
    try {
      parseAgentHooks(badPattern);
    } catch (caught) {
      error = caught;
    }
    expect(DelegateError.hasCode(error, 'INVALID_AGENT_DEFINITION')).toBe(true);
    expect((error as Error).message).toContain('hooks.PreToolUse[0].matcher');
  });
});

describe('hookMatches', () => {
  it('matches exact names, | lists, anchored patterns, and everything for none, "" or *', () => {
    expect(hookMatches(undefined, 'Read')).toBe(true);
    expect(hookMatches('', 'Read')).toBe(true);
    expect(hookMatches('*', 'Read')).toBe(true);
    expect(hookMatches('Bash', 'Bash')).toBe(true);
    expect(hookMatches('Bash', 'BashOutput')).toBe(false);
    expect(hookMatches('Write|Edit', 'Edit')).toBe(true);
    expect(hookMatches('Write|Edit', 'Read')).toBe(false);
    expect(hookMatches('mcp__github__.*', 'mcp__github__create_issue')).toBe(true);
    expect(hookMatches('mcp__github__.*', 'xmcp__github__a')).toBe(false);
  });
});
