import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { validateSessionOptions } from './session-options.js';

function failure(options: unknown): string {
  try {
    validateSessionOptions(options);
  } catch (error) {
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected the options to be refused');
}

describe('validateSessionOptions', () => {
  it("turns rule strings into rule objects with tool-filter's parser", () => {
    const options = validateSessionOptions({
      cwd: '/repo',
      allowRules: ['Bash(git commit:*)', 'Read'],
      denyRules: ['Agent(Explore)', 'mcp__github__delete_repo'],
      askRules: ['Bash(npm publish)'],
    });
    expect(options.allowRules).toEqual([
      {
        source: 'session',
        ruleBehavior: 'allow',
        ruleValue: { toolName: 'Bash', ruleContent: 'git commit:*' },
      },
      { source: 'session', ruleBehavior: 'allow', ruleValue: { toolName: 'Read' } },
    ]);
    expect(options.denyRules.map((rule) => rule.ruleValue)).toEqual([
      { toolName: 'Agent', ruleContent: 'Explore' },
      { toolName: 'mcp__github__delete_repo' },
    ]);
    expect(options.askRules[0]?.ruleBehavior).toBe('ask');
  });

  it('accepts rule objects and tool-and-content objects', () => {
    const rule = {
      source: 'projectSettings' as const,
      ruleBehavior: 'deny' as const,
      ruleValue: { toolName: 'Write' },
    };
    const options = validateSessionOptions({
      cwd: '/repo',
      denyRules: [rule, { toolName: 'Bash', ruleContent: 'rm:*' }],
    });
    expect(options.denyRules).toEqual([
      rule,
      {
        source: 'session',
        ruleBehavior: 'deny',
        ruleValue: { toolName: 'Bash', ruleContent: 'rm:*' },
      },
    ]);
  });

  it('names the bad field and says what it should be', () => {
    expect(failure({ cwd: '/repo', denyRules: ['Bash(rm:*'] })).toMatch(
      /options\.denyRules\[0\]: "Bash\(rm:\*" is not a permission rule/,
    );
    expect(failure({ cwd: '/repo', denyRules: [{ toolName: 5 }] })).toMatch(
      /options\.denyRules\[0\]/,
    );
    expect(
      failure({
        cwd: '/repo',
        allowRules: [{ source: 'session', ruleBehavior: 'deny', ruleValue: { toolName: 'Bash' } }],
      }),
    ).toMatch(/options\.allowRules\[0\].*ruleBehavior "allow"/);
    expect(failure({ cwd: '/repo', permissionMode: 'yolo' })).toMatch(/options\.permissionMode/);
    expect(failure({ cwd: '/repo', maxBackgroundAgents: 0 })).toMatch(
      /options\.maxBackgroundAgents/,
    );
    expect(failure({ cwd: '/repo', denyRule: ['Bash'] })).toMatch(/unknown option "denyRule"/);
    expect(failure({ cwd: '/repo', sessionId: '../escape' })).toMatch(/options\.sessionId/);
    expect(failure({ cwd: '/repo', client: {} })).toMatch(
      /options\.client: expected an @anthropic-ai\/sdk client/,
    );
    expect(failure({})).toMatch(/options\.cwd/);
  });
});

describe('timer options', () => {
  // Node turns a delay over 2^31 - 1 ms into 1 ms: a stall timeout that large would abort every stream.
  it.each(['backgroundHintMs', 'mcpWaitMs', 'mcpPollMs', 'streamIdleTimeoutMs'])(
    'refuses %s beyond the longest timer Node keeps, naming it',
    (option) => {
      expect(failure({ cwd: '/repo', [option]: 2 ** 31 })).toMatch(
        new RegExp(`options\\.${option}: at most 2147483647 ms`),
      );
      expect(validateSessionOptions({ cwd: '/repo', [option]: 2 ** 31 - 1 })).toMatchObject({
        [option]: 2 ** 31 - 1,
      });
    },
  );
});

describe('rule objects', () => {
  // A deny rule whose tool name no tool can have would silently deny nothing.
  it('refuses a rule object or tool-and-content object whose tool name is no tool name', () => {
    expect(
      failure({
        cwd: '/repo',
        denyRules: [
          { source: 'session', ruleBehavior: 'deny', ruleValue: { toolName: 'Bash(rm:*' } },
        ],
      }),
    ).toMatch(/options\.denyRules\[0\]\.ruleValue\.toolName: "Bash\(rm:\*" is not a tool name/);
    expect(failure({ cwd: '/repo', allowRules: [{ toolName: '' }] })).toMatch(
      /options\.allowRules\[0\]\.toolName: "" is not a tool name/,
    );
    expect(
      validateSessionOptions({
        cwd: '/repo',
        denyRules: [
          { toolName: 'mcp__github__delete_repo' },
          { toolName: 'Bash', ruleContent: 'rm:*' },
        ],
      }).denyRules.map((rule) => rule.ruleValue.toolName),
    ).toEqual(['mcp__github__delete_repo', 'Bash']);
  });
});
