import { describe, expect, it } from 'vitest';
import { splitToolRules } from './split-tool-rules.js';

describe('splitToolRules', () => {
  it('splits on commas and spaces outside parentheses', () => {
    expect(
      splitToolRules(['Read Edit,Grep', 'Bash(git add, git commit) Agent(Explore, Plan)']),
    ).toEqual(['Read', 'Edit', 'Grep', 'Bash(git add, git commit)', 'Agent(Explore, Plan)']);
    expect(splitToolRules(['  ', ''])).toEqual([]);
  });
});
