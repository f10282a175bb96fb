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
});
