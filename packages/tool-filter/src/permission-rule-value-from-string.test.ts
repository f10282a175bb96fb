import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { permissionRuleValueFromString } from './permission-rule-value-from-string.js';
import { permissionRuleValueToString } from './permission-rule-value-to-string.js';

describe('permissionRuleValueFromString', () => {
  it('reads a whole-tool rule', () => {
    expect(permissionRuleValueFromString('Bash')).toEqual({ toolName: 'Bash' });
  });

  it('reads a tool with content', () => {
    expect(permissionRuleValueFromString('Bash(git status)')).toEqual({
      toolName: 'Bash',
      ruleContent: 'git status',
    });
    expect(permissionRuleValueFromString('Agent(worker, researcher)')).toEqual({
      toolName: 'Agent',
      ruleContent: 'worker, researcher',
    });
  });

  it('unescapes parentheses and backslashes in the content', () => {
    expect(permissionRuleValueFromString('Bash(echo \\(hi\\))')).toEqual({
      toolName: 'Bash',
      ruleContent: 'echo (hi)',
    });
    expect(permissionRuleValueFromString('Bash(printf a\\\\b)')).toEqual({
      toolName: 'Bash',
      ruleContent: 'printf a\\b',
    });
    expect(permissionRuleValueFromString('Bash(echo \\n)')).toEqual({
      toolName: 'Bash',
      ruleContent: 'echo \\n',
    });
  });

  it('keeps unescaped inner parentheses that balance', () => {
    expect(permissionRuleValueFromString('Bash(echo (hi))')).toEqual({
      toolName: 'Bash',
      ruleContent: 'echo (hi)',
    });
  });

  it('trims the spec and the tool name', () => {
    expect(permissionRuleValueFromString('  Read  ')).toEqual({ toolName: 'Read' });
    expect(permissionRuleValueFromString(' Bash (ls) ')).toEqual({
      toolName: 'Bash',
      ruleContent: 'ls',
    });
  });

  it('reads Tool(), Tool( ) and Tool(*) as the whole tool', () => {
    for (const spec of ['Bash()', 'Bash( )', 'Bash(*)', 'Bash( * )']) {
      expect(permissionRuleValueFromString(spec)).toEqual({ toolName: 'Bash' });
    }
  });

  it('treats malformed specs as a whole-tool name without throwing', () => {
    expect(permissionRuleValueFromString('Bash(ls')).toEqual({ toolName: 'Bash(ls' });
    expect(permissionRuleValueFromString('Bash(ls) now')).toEqual({ toolName: 'Bash(ls) now' });
    expect(permissionRuleValueFromString('(ls)')).toEqual({ toolName: '(ls)' });
    expect(permissionRuleValueFromString('Bash(ls\\)')).toEqual({ toolName: 'Bash(ls\\)' });
    expect(permissionRuleValueFromString('Bash)')).toEqual({ toolName: 'Bash)' });
    expect(permissionRuleValueFromString('')).toEqual({ toolName: '' });
    expect(permissionRuleValueFromString('   ')).toEqual({ toolName: '' });
  });

  it('never throws and always returns a trimmed tool name', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('a', 'B', ' ', '(', ')', '\\', '*', ',') }),
        (spec) => {
          const value = permissionRuleValueFromString(spec);
          expect(value.toolName).toBe(value.toolName.trim());
          if (value.ruleContent !== undefined)
            expect(['', '*']).not.toContain(value.ruleContent.trim());
        },
      ),
    );
  });
});

const toolName = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,15}$/),
  fc.stringMatching(/^mcp__[a-z]{1,8}__[a-z_]{1,8}$/),
);
const ruleContent = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('(', ')', '\\', '*', ' ', ','),
      fc.string({ minLength: 1, maxLength: 1 }),
    ),
  })
  .filter((content) => content.trim() !== '' && content.trim() !== '*');

describe('permission rule round trip', () => {
  it('reads back every value it writes', () => {
    fc.assert(
      fc.property(toolName, fc.option(ruleContent, { nil: undefined }), (name, content) => {
        const value =
          content === undefined ? { toolName: name } : { toolName: name, ruleContent: content };
        expect(permissionRuleValueFromString(permissionRuleValueToString(value))).toEqual(value);
      }),
      { numRuns: 500 },
    );
  });

  it('writes back well-formed specs unchanged', () => {
    for (const spec of [
      'Bash',
      'Bash(git status)',
      'Bash(echo \\(hi\\))',
      'Agent(worker, researcher)',
    ]) {
      expect(permissionRuleValueToString(permissionRuleValueFromString(spec))).toBe(spec);
    }
  });
});
