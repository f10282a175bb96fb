import { describe, expect, it } from 'vitest';
import { readToolList } from './read-tool-list.js';

describe('readToolList', () => {
  it('warns when a parenthesis left open swallows the rest of the list', () => {
    // `Write` is read as part of `Bash(rm:*, Write`, as Claude Code reads it: it is not removed.
    const reading = readToolList('Bash(rm:*, Write', 'disallowedTools');
    expect(reading.tools).toEqual(['Bash(rm:*, Write']);
    expect(reading.notes).toEqual([
      expect.stringMatching(
        /`disallowedTools` "Bash\(rm:\*, Write" opens a parenthesis it never closes, so everything after it .* is one item/,
      ),
    ]);
    expect(readToolList(['Read', 'Bash(git add'], 'tools').notes).toEqual([
      expect.stringMatching(/`tools` item 2 "Bash\(git add" opens a parenthesis it never closes/),
    ]);
  });

  it('says nothing about balanced parentheses', () => {
    expect(readToolList('Read, Bash(git add, git commit), Edit', 'tools')).toEqual({
      tools: ['Read', 'Bash(git add, git commit)', 'Edit'],
      notes: [],
    });
  });

  it('notes a name that differs from a tool only in case, and a list in which no name is a tool', () => {
    const lower = readToolList('read, grep, bash', 'tools');
    expect(lower.tools).toEqual(['read', 'grep', 'bash']);
    expect(lower.notes).toEqual([
      expect.stringContaining(
        '`tools` names "read", which is no tool: tool names are case-sensitive, so it allows nothing (as in Claude Code); write "Read"',
      ),
      expect.stringContaining('write "Grep"'),
      expect.stringContaining('write "Bash"'),
    ]);
    expect(readToolList(['Bash(git:*)', 'bash'], 'disallowedTools').notes).toEqual([
      expect.stringContaining('so it removes nothing (as in Claude Code); write "Bash"'),
    ]);
    const prose = readToolList('All tools', 'tools');
    expect(prose.notes).toContainEqual(
      expect.stringContaining('none of the names in `tools` (All, tools) is a known tool'),
    );
    // Claude Code's tool names, MCP tools and `*` are never noted.
    for (const value of [
      'Read, WebSearch, WebFetch, TodoWrite',
      'MultiEdit, LS, BashOutput',
      'mcp__github__search',
      '*',
    ]) {
      expect(readToolList(value, 'tools').notes, value).toEqual([]);
    }
  });
});
