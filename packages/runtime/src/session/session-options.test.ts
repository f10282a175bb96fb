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
    // A union names what it takes, not only the last thing it tried.
    expect(failure({ cwd: '/repo', thinking: { type: 'enabled', budget_tokens: -1 } })).toMatch(
      /options\.thinking\.budgetTokens: budgetTokens must be a whole number of at least 1024/,
    );
    expect(failure({ cwd: '/repo', thinking: { type: 'on' } })).toMatch(
      /options\.thinking\.type: must be \{ type: 'disabled' \}, \{ type: 'adaptive' \} or/,
    );
    expect(failure({ cwd: '/repo', transcriptDir: 5 })).toMatch(
      /options\.transcriptDir: must be a directory path, or false for no transcripts/,
    );
  });

  it('refuses tools the API would refuse in every request, naming the tool', () => {
    const tool = (name: string) => ({ name, description: async () => 'x', call: async () => ({}) });
    expect(failure({ cwd: '/repo', tools: [tool('Lookup'), tool('Lookup')] })).toMatch(
      /options\.tools\[1\]\.name: "Lookup" is the name of an earlier tool too/,
    );
    expect(failure({ cwd: '/repo', tools: [tool('bad name/..')] })).toMatch(
      /options\.tools\[0\]\.name: "bad name\/\.\." is not a name the Messages API takes/,
    );
    expect(failure({ cwd: '/repo', tools: [tool('')] })).toMatch(/options\.tools\[0\]\.name/);
    expect(failure({ cwd: '/repo', tools: [tool('x'.repeat(129))] })).toMatch(
      /options\.tools\[0\]\.name/,
    );
    for (const own of ['Agent', 'TaskOutput', 'TaskStop', 'SendMessage']) {
      expect(failure({ cwd: '/repo', tools: [tool(own)] })).toMatch(
        new RegExp(`options\\.tools\\[0\\]\\.name: "${own}" is a tool the session adds itself`),
      );
    }
    expect(() =>
      validateSessionOptions({ cwd: '/repo', tools: [tool('Read'), tool('my_tool-2')] }),
    ).not.toThrow();
  });

  it('refuses a system prompt part of only whitespace, which the API refuses, and takes an empty one as none', () => {
    expect(failure({ cwd: '/repo', customSystemPrompt: '   ' })).toMatch(
      /options\.customSystemPrompt: holds only whitespace/,
    );
    expect(failure({ cwd: '/repo', appendSystemPrompt: '  \n ' })).toMatch(
      /options\.appendSystemPrompt: holds only whitespace/,
    );
    expect(() =>
      validateSessionOptions({ cwd: '/repo', customSystemPrompt: '', appendSystemPrompt: '' }),
    ).not.toThrow();
  });

  it('checks agentLoading like the other options', () => {
    expect(failure({ cwd: '/repo', agentLoading: { pluginDir: ['/p'] } })).toMatch(
      /unknown option "pluginDir"/,
    );
    expect(failure({ cwd: '/repo', agentLoading: { pluginDirs: '/tmp' } })).toMatch(
      /options\.agentLoading\.pluginDirs/,
    );
    expect(failure({ cwd: '/repo', agentLoading: { homeDir: 5 } })).toMatch(
      /options\.agentLoading\.homeDir/,
    );
    expect(failure({ cwd: '/repo', agentLoading: { cwd: 5 } })).toMatch(
      /options\.agentLoading\.cwd/,
    );
    expect(failure({ cwd: '/repo', agentLoading: { concurrency: 0 } })).toMatch(
      /options\.agentLoading\.concurrency/,
    );
    expect(() =>
      validateSessionOptions({
        cwd: '/repo',
        agentLoading: { pluginDirs: ['/p'], policyDir: '/etc/x', flagAgents: '{}', concurrency: 4 },
      }),
    ).not.toThrow();
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
