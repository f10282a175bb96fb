import { describe, expect, it } from 'vitest';
import type { PermissionRule, Tool } from '@delegate/core';
import { z } from 'zod';
import { decideByRules, splitShellCommand } from './permissions.js';

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
