import { link, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PermissionRule, Tool, ToolUseContext } from '@delegate/core';
import { createBashTool } from '@delegate/tools';
import { z } from 'zod';
import {
  createCanUseTool,
  decideByRules,
  prepareRuleChecks,
  splitShellCommand,
} from './permissions.js';

beforeAll(() => prepareRuleChecks());

const bash: Tool = {
  name: 'Bash',
  inputSchema: z.object({ command: z.string() }),
  description: () => 'shell',
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  call: async () => ({ content: '' }),
};

const rule = (behavior: 'allow' | 'deny', content: string): PermissionRule => ({
  source: 'projectSettings',
  ruleBehavior: behavior,
  ruleValue: { toolName: 'Bash', ruleContent: content },
});

const decide = (
  command: string,
  rules: { allow?: string[]; deny?: string[] },
  mode: 'default' | 'bypassPermissions' = 'default',
) =>
  decideByRules({
    tool: bash,
    input: { command },
    mode,
    allowRules: (rules.allow ?? []).map((content) => rule('allow', content)),
    denyRules: (rules.deny ?? []).map((content) => rule('deny', content)),
  }).behavior;

describe('Bash permission rules', () => {
  it('splits chained commands and reduces programs to their base names', () => {
    expect(splitShellCommand('cd . && /bin/rm -rf x; echo  done | cat')).toEqual({
      parts: ['cd .', 'rm -rf x', 'echo done', 'cat'],
      opaque: false,
    });
    expect(splitShellCommand('echo $(whoami) > out').opaque).toBe(true);
  });

  it('denies when any chained command matches a deny rule, even in bypass mode', () => {
    for (const command of [
      'rm -rf x',
      ' rm -rf x',
      'cd . && rm -rf x',
      '/bin/rm -rf x',
      'ls; rm x',
    ]) {
      expect(decide(command, { deny: ['rm:*'] }, 'bypassPermissions')).toBe('deny');
    }
    expect(decide('rmdir empty', { deny: ['rm:*'] }, 'bypassPermissions')).toBe('allow');
  });

  it('allows only when every chained command matches, and never a substitution or redirection', () => {
    expect(decide('git status', { allow: ['git status:*'] })).toBe('allow');
    expect(decide('git status --short', { allow: ['git status:*'] })).toBe('allow');
    expect(decide('git status; rm -rf ~/project', { allow: ['git status:*'] })).toBe('ask');
    expect(decide('git status > /etc/passwd', { allow: ['git status:*'] })).toBe('ask');
    expect(decide('git statusx', { allow: ['git status:*'] })).toBe('ask');
  });
});

describe('Bash deny rules see through wrappers, strings and substitutions', () => {
  it('denies every way of running a denied command (issue 13), even in bypass mode', () => {
    for (const command of [
      'env rm -rf x',
      'FOO=1 rm -rf x',
      'sudo rm -rf x',
      "bash -c 'rm -rf x'",
      'zsh -c "rm -rf x"',
      'echo $(rm -rf x)',
      'echo `rm -rf x`',
      'ls | xargs rm',
      'command rm x',
      'nice -n 5 rm x',
      'timeout 5 rm x',
      'nohup rm x',
      'time rm x',
      'cat <(rm x)',
      '(rm x)',
      '{ rm x; }',
      'true && rm x',
    ]) {
      expect({
        command,
        decision: decide(command, { deny: ['rm:*'] }, 'bypassPermissions'),
      }).toEqual({
        command,
        decision: 'deny',
      });
    }
  });

  it('treats a line it cannot see through as matching deny rules and no allow rule', () => {
    for (const command of ['eval "$X"', '$CMD x', 'echo x | bash', 'echo (']) {
      expect(decide(command, { deny: ['rm:*'] }, 'bypassPermissions')).toBe('deny');
      expect(decide(command, { allow: ['echo:*', 'eval:*'] })).toBe('ask');
    }
  });

  it('allows a chain when each of its commands has an allow rule', () => {
    expect(decide('git add . && git commit -m x', { allow: ['git add:*', 'git commit:*'] })).toBe(
      'allow',
    );
    expect(decide('git add . && rm x', { allow: ['git add:*', 'git commit:*'] })).toBe('ask');
  });
});

describe('read-only Bash lines run without asking only inside the allowed directories', () => {
  let base: string;
  let root: string;

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), 'delegate-permissions-')));
    root = join(base, 'project');
    await mkdir(root);
    await writeFile(join(root, 'inside.txt'), 'inside\n');
    await writeFile(join(base, 'secret.txt'), 'secret\n');
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  function contextAt(cwd: string): ToolUseContext {
    return {
      cwd,
      getAppState: () => ({
        toolPermissionContext: {
          mode: 'default',
          allowRules: [],
          denyRules: [],
          askRules: [],
          additionalWorkingDirectories: [],
        },
        tasks: {},
        mcp: { clients: [], tools: [] },
      }),
    } as unknown as ToolUseContext;
  }

  async function askedFor(command: string): Promise<{ behavior: string; asked: string[] }> {
    const asked: string[] = [];
    const canUseTool = createCanUseTool({
      ask: async ({ message }) => {
        asked.push(message);
        return { behavior: 'deny', message: 'no' };
      },
    });
    const decision = await canUseTool(createBashTool(), { command }, contextAt(root));
    return { behavior: decision.behavior, asked };
  }

  it('allows reading inside and asks, naming the path, for reading outside', async () => {
    expect(await askedFor('cat inside.txt')).toEqual({ behavior: 'allow', asked: [] });
    const outside = await askedFor(`cat ${join(base, 'secret.txt')}`);
    expect(outside.behavior).toBe('deny');
    expect(outside.asked).toHaveLength(1);
    expect(outside.asked[0]).toContain(join(base, 'secret.txt'));
    expect((await askedFor('find .. -name secret.txt')).asked).toHaveLength(1);
  });

  it('asks for a hard link to a file outside', async () => {
    await link(join(base, 'secret.txt'), join(root, 'hard.txt'));
    const result = await askedFor('cat hard.txt');
    expect(result.asked[0]).toContain('hard link');
  });

  it('never allows a read-only Bash line without a context to check its paths', () => {
    expect(
      decideByRules({
        tool: createBashTool(),
        input: { command: 'cat inside.txt' },
        mode: 'default',
      }).behavior,
    ).toBe('ask');
  });
});
