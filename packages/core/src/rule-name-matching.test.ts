import { describe, expect, it } from 'vitest';
import { mcpToolNamePrefix } from './mcp-tool-name-prefix.js';
import {
  PERMISSION_RULE_TOOL_NAME_PATTERN,
  permissionRuleProblem,
  ruleNameMatchesToolName,
  toolMatchesRuleName,
} from './rule-name-matching.js';

describe('ruleNameMatchesToolName', () => {
  it('names a tool exactly, or every tool of an MCP server as mcp__server or mcp__server__*', () => {
    const names = ['Bash', 'mcp__github__search', 'mcp__github__create_issue', 'mcp__gh__x'];
    const matched = (rule: string) => names.filter((name) => ruleNameMatchesToolName(rule, name));
    expect(matched('Bash')).toEqual(['Bash']);
    expect(matched('Bas')).toEqual([]);
    expect(matched('mcp__github__search')).toEqual(['mcp__github__search']);
    for (const rule of ['mcp__github', 'mcp__github__*'])
      expect(matched(rule)).toEqual(['mcp__github__search', 'mcp__github__create_issue']);
    expect(matched('mcp__git')).toEqual([]);
    expect(matched('mcp__*')).toEqual([]);
    expect(matched('Bash__*')).toEqual([]);
  });

  it('counts aliases', () => {
    expect(toolMatchesRuleName({ name: 'Agent', aliases: ['Task'] }, 'Task')).toBe(true);
    expect(toolMatchesRuleName({ name: 'x', aliases: ['mcp__s__x'] }, 'mcp__s')).toBe(true);
    expect(toolMatchesRuleName({ name: 'Read' }, 'read')).toBe(false);
  });
});

describe('permissionRuleProblem', () => {
  it('accepts tool names and whole MCP servers', () => {
    for (const toolName of ['Read', 'mcp__github', 'mcp__github__*', 'mcp__a.b'.replace('.', '_')])
      expect(permissionRuleProblem({ toolName })).toBeUndefined();
    expect(permissionRuleProblem({ toolName: 'Bash', ruleContent: 'rm:*' })).toBeUndefined();
    expect(permissionRuleProblem({ toolName: 'mcp__github__*', ruleContent: '*' })).toBeUndefined();
    expect(PERMISSION_RULE_TOOL_NAME_PATTERN.test('mcp__github__*')).toBe(true);
  });

  it('says why a rule can match no tool', () => {
    expect(permissionRuleProblem({ toolName: '*' })).toMatch(
      /has a wildcard, which matches no tool/,
    );
    expect(permissionRuleProblem({ toolName: 'mcp__*' })).toMatch(/"mcp__<server>__\*"/);
    expect(permissionRuleProblem({ toolName: 'mcp__github__get*' })).toMatch(/wildcard/);
    expect(permissionRuleProblem({ toolName: 'Bash(rm' })).toMatch(/parentheses do not pair up/);
    expect(permissionRuleProblem({ toolName: '' })).toMatch(/is not a tool name/);
    expect(permissionRuleProblem({ toolName: 'mcp__github__*', ruleContent: 'x' })).toMatch(
      /takes no content/,
    );
  });
});

describe('mcpToolNamePrefix', () => {
  it('normalizes the server name as tool names are', () => {
    expect(mcpToolNamePrefix('acme.tools')).toBe('mcp__acme_tools__');
    expect(mcpToolNamePrefix('gh__ent')).toBe('mcp__gh__ent__');
  });
});
