import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { DelegateError } from '@delegate/core';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { DelegateSession } from './session.js';
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
    expect(failure({ cwd: '/repo', denyRule: ['Bash'] })).toMatch(
      /options\.denyRule is not an option \(did you mean denyRules\?\)/,
    );
    expect(failure({ cwd: '/repo', colour: 'blue' })).toMatch(
      /options\.colour is not an option \(check the spelling against DelegateSessionOptions\)/,
    );
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
      /options\.agentLoading\.pluginDir is not an option \(did you mean pluginDirs\?\)/,
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

describe('unknown keys inside object options', () => {
  const PRICE = {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheWrite5mPerMTok: 3.75,
    cacheWrite1hPerMTok: 6,
    cacheReadPerMTok: 0.3,
  };

  function issuePaths(options: unknown): PropertyKey[][] {
    try {
      validateSessionOptions(options);
    } catch (error) {
      const details = (error as DelegateError).details as { issues: { path: PropertyKey[] }[] };
      return details.issues.map((issue) => issue.path);
    }
    throw new Error('expected the options to be refused');
  }

  it('refuses an unknown key of thinking, naming its path and the key meant', () => {
    expect(
      failure({ cwd: '/repo', thinking: { type: 'enabled', budgetTokens: 2048, colour: 1 } }),
    ).toBe(
      'DelegateSession.create: options.thinking.colour is not an option (the options here are type, budgetTokens).',
    );
    // The Messages API's own spelling: named first, with the key meant, before the missing one.
    expect(failure({ cwd: '/repo', thinking: { type: 'enabled', budget_tokens: 2048 } })).toMatch(
      /^DelegateSession\.create: options\.thinking\.budget_tokens is not an option \(did you mean budgetTokens\?\); options\.thinking\.budgetTokens: /,
    );
    expect(failure({ cwd: '/repo', thinking: { type: 'disabled', budgetTokens: 2048 } })).toMatch(
      /options\.thinking\.budgetTokens is not an option \(the options here are type\)/,
    );
    expect(failure({ cwd: '/repo', thinking: { type: 'adaptive', effort: 'high' } })).toMatch(
      /options\.thinking\.effort is not an option/,
    );
    expect(
      issuePaths({ cwd: '/repo', thinking: { type: 'enabled', budgetTokens: 2048, colour: 1 } }),
    ).toEqual([['thinking', 'colour']]);
  });

  it('refuses an unknown key of a price-table entry, whose value would be ignored', () => {
    const message = failure({
      cwd: '/repo',
      priceTable: { sonnet: { ...PRICE, inputPerMtok: 2 } },
    });
    expect(message).toBe(
      'DelegateSession.create: options.priceTable.sonnet.inputPerMtok is not an option (did you mean inputPerMTok?).',
    );
    expect(
      failure({ cwd: '/repo', priceTable: { 'claude-x': { ...PRICE, cacheWritePerMTok: 1 } } }),
    ).toMatch(/options\.priceTable\.claude-x\.cacheWritePerMTok is not an option/);
  });

  it('refuses an unknown key of a rule object, which would otherwise widen the rule to the whole tool', () => {
    // Read without its misspelt ruleContent, this allow rule would approve every Bash command.
    expect(
      failure({
        cwd: '/repo',
        allowRules: [
          {
            source: 'session',
            ruleBehavior: 'allow',
            ruleValue: { toolName: 'Bash', ruleContnt: 'git status' },
          },
        ],
      }),
    ).toBe(
      'DelegateSession.create: options.allowRules[0].ruleValue.ruleContnt is not an option (did you mean ruleContent?).',
    );
    expect(
      failure({
        cwd: '/repo',
        denyRules: [
          { source: 'session', ruleBehavior: 'deny', ruleValue: { toolName: 'Bash' }, scope: 1 },
        ],
      }),
    ).toMatch(
      /options\.denyRules\[0\]\.scope is not an option \(the options here are source, ruleBehavior, ruleValue\)/,
    );
    expect(
      failure({ cwd: '/repo', askRules: [{ toolName: 'Bash', rule_content: 'rm:*' }] }),
    ).toMatch(
      /options\.askRules\[0\]\.rule_content is not an option \(did you mean ruleContent\?\)/,
    );
    // A misspelt toolName is named as such, not as a rule object missing its source.
    expect(failure({ cwd: '/repo', denyRules: [{ toolNme: 'Bash' }] })).toMatch(
      /options\.denyRules\[0\]\.toolNme is not an option \(did you mean toolName\?\)/,
    );
    expect(
      issuePaths({ cwd: '/repo', denyRules: ['Read', { toolName: 'Bash', bogus: 1 }] }),
    ).toEqual([['denyRules', 1, 'bogus']]);
  });

  it('names every unknown key, a near one with the key meant', () => {
    expect(failure({ cwd: '/repo', agentLoading: { exploremodel: 'haiku', extra: true } })).toMatch(
      /options\.agentLoading\.exploremodel is not an option \(did you mean exploreModel\?\); options\.agentLoading\.extra is not an option \(the options here are cwd, homeDir, flagAgents, policyDir, pluginDirs, exploreModel, concurrency\)/,
    );
    expect(failure({ cwd: '/repo', max_cost_usd: 1 })).toMatch(
      /options\.max_cost_usd is not an option \(did you mean maxCostUsd\?\)/,
    );
  });

  it('keeps open maps open: any context name, variable, event, model or agent name', () => {
    expect(() =>
      validateSessionOptions({
        cwd: '/repo',
        userContext: { projectInstructions: 'x', anyNameAtAll: 'y' },
        env: { SOME_VARIABLE: '1', OTHER: undefined },
        mainAgentHooks: { PreToolUse: [], SomeFutureEvent: [{ anything: true }] },
        priceTable: { 'my-own-model-2030': PRICE, opus: PRICE },
        agentLoading: { flagAgents: { reviewer: { description: 'd', prompt: 'p', anyKey: 1 } } },
      }),
    ).not.toThrow();
  });

  it('accepts a full configuration with every option set', () => {
    const tool = { name: 'Lookup', description: async () => 'looks up', call: async () => ({}) };
    const options = validateSessionOptions({
      cwd: '/repo',
      client: { messages: { create: () => undefined } },
      apiKey: 'sk-test-key',
      baseURL: 'http://127.0.0.1:9',
      model: 'sonnet',
      tools: [tool],
      agentDefinitions: { activeAgents: [], allAgents: [] },
      agentLoading: {
        cwd: '/repo',
        homeDir: '/home/me',
        flagAgents: '{}',
        policyDir: '/etc/delegate',
        pluginDirs: ['/plugins/a'],
        exploreModel: 'haiku',
        concurrency: 4,
      },
      permissionMode: 'acceptEdits',
      allowRules: ['Read', { toolName: 'Bash', ruleContent: 'git status' }],
      denyRules: [
        { source: 'policySettings', ruleBehavior: 'deny', ruleValue: { toolName: 'Write' } },
      ],
      askRules: ['Bash(npm publish)'],
      ask: async () => 'allow',
      transcriptDir: '/tmp/transcripts',
      sessionId: 'session-1',
      resume: false,
      customSystemPrompt: 'You help.',
      appendSystemPrompt: 'Be brief.',
      userContext: { projectInstructions: 'Use tabs.' },
      thinking: { type: 'enabled', budgetTokens: 2048 },
      mcp: { getClients: () => [], getTools: () => [] },
      env: { DELEGATE_DISABLE_BACKGROUND_TASKS: '0' },
      homeDir: '/home/me',
      mainAgentHooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }],
      },
      forkEnabled: true,
      forkForceAsync: false,
      coordinatorMode: false,
      backgroundTasksDisabled: false,
      agentListInMessages: true,
      maxBackgroundAgents: 4,
      maxDepth: 2,
      backgroundHintMs: 1000,
      mcpWaitMs: 100,
      mcpPollMs: 10,
      defaultSubagentModel: 'haiku',
      maxRetainedAgents: 10,
      maxAgentSummaries: 100,
      worktreeRoot: '/tmp/worktrees',
      onEventListenerError: () => {},
      forkLayout: 'shared-message',
      debugCacheDiagnosis: () => {},
      maxTokens: 100_000,
      maxCostUsd: 1,
      priceTable: { sonnet: PRICE },
      streamIdleTimeoutMs: 60_000,
      maxConsecutiveStalls: 2,
      secrets: ['database-password'],
    });
    expect(options.thinking).toEqual({ type: 'enabled', budgetTokens: 2048 });
    expect(options.priceTable).toEqual({ sonnet: PRICE });
    expect(options.allowRules.map((rule) => rule.ruleValue)).toEqual([
      { toolName: 'Read' },
      { toolName: 'Bash', ruleContent: 'git status' },
    ]);
    for (const thinking of [{ type: 'disabled' }, { type: 'adaptive' }]) {
      expect(validateSessionOptions({ cwd: '/repo', thinking }).thinking).toEqual(thinking);
    }
  });
});

describe('DelegateSession.create with nested options', () => {
  let current: TestSession | undefined;
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });

  const PRICE = {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheWrite5mPerMTok: 3.75,
    cacheWrite1hPerMTok: 6,
    cacheReadPerMTok: 0.3,
  };

  it('refuses an unknown nested key before any request, and runs with every nested option set', async () => {
    current = await createTestSession({
      policy: rules([], { fallback: 'hello back' }),
      session: {
        thinking: { type: 'enabled', budgetTokens: 2048 },
        priceTable: { sonnet: PRICE, 'my-model': PRICE },
        allowRules: ['Read', { toolName: 'Bash', ruleContent: 'git status' }],
        denyRules: [
          {
            source: 'session',
            ruleBehavior: 'deny',
            ruleValue: { toolName: 'Bash', ruleContent: 'rm:*' },
          },
        ],
        userContext: { projectInstructions: 'Be brief.' },
        mainAgentHooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }],
        },
        secrets: ['database-password'],
        maxCostUsd: 5,
      },
    });
    const { sim, cwd } = current;
    expect((await current.session.send('hi')).text).toBe('hello back');
    expect(sim.journal.entries).toHaveLength(1);
    for (const [options, message] of [
      [
        { thinking: { type: 'enabled', budgetTokens: 2048, colour: 1 } },
        'options.thinking.colour is not an option',
      ],
      [
        { priceTable: { sonnet: { ...PRICE, inputPerMtok: 2 } } },
        'options.priceTable.sonnet.inputPerMtok is not an option (did you mean inputPerMTok?)',
      ],
    ] as const) {
      await expect(
        DelegateSession.create({
          cwd,
          apiKey: 'k',
          baseURL: sim.url,
          transcriptDir: false,
          ...(options as object),
        }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining(`DelegateSession.create: ${message}`),
      });
    }
    expect(sim.journal.entries).toHaveLength(1);
  });
});
