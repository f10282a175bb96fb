import { describe, expect, it } from 'vitest';
import { permissionRuleValueToString } from './permission-rule-value-to-string.js';

describe('permissionRuleValueToString', () => {
  it('writes a whole-tool rule as the bare name', () => {
    expect(permissionRuleValueToString({ toolName: 'Read' })).toBe('Read');
  });

  it('writes content inside parentheses', () => {
    expect(permissionRuleValueToString({ toolName: 'Agent', ruleContent: 'Explore' })).toBe(
      'Agent(Explore)',
    );
  });

  it('escapes parentheses and backslashes in the content', () => {
    expect(permissionRuleValueToString({ toolName: 'Bash', ruleContent: 'echo (hi)' })).toBe(
      'Bash(echo \\(hi\\))',
    );
    expect(permissionRuleValueToString({ toolName: 'Bash', ruleContent: 'a\\b' })).toBe(
      'Bash(a\\\\b)',
    );
  });
});
