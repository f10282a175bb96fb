import { describe, expect, it } from 'vitest';
import { closestKey, editDistance } from './closest-key.js';

const AGENT_KEYS = ['name', 'description', 'tools', 'disallowedTools', 'model', 'maxTurns'];
const AGENT_KEYS_MORE = [...AGENT_KEYS, 'permissionMode', 'color', 'hooks', 'memory', 'skills'];

describe('editDistance', () => {
  it('counts inserts, deletes, replacements and swapped neighbours as one edit each', () => {
    expect(editDistance('tools', 'tools')).toBe(0);
    expect(editDistance('tool', 'tools')).toBe(1);
    expect(editDistance('modle', 'model')).toBe(1);
    expect(editDistance('desciption', 'description')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });
});

describe('closestKey, strict (agent files)', () => {
  const meant = (key: string) => closestKey(key, AGENT_KEYS_MORE, { mode: 'strict' });

  it('names the key a misspelt one meant: case, - and _, one or two edits, two letters swapped', () => {
    expect(
      ['tool', 'Tool', 'desciption', 'max_turns', 'permission-mode', 'colour', 'modle', 'hook'].map(
        meant,
      ),
    ).toEqual([
      'tools',
      'tools',
      'description',
      'maxTurns',
      'permissionMode',
      'color',
      'model',
      'hooks',
    ]);
  });

  it('names none for keys that are not near one, near two alike, or only a start of one', () => {
    expect(
      ['category', 'tags', 'author', 'version', 'title', 'examples', '', 'perm'].map(meant),
    ).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(closestKey('ab', ['ac', 'ad'], { mode: 'strict' })).toBeUndefined();
  });
});

describe('closestKey, loose (API options)', () => {
  it('also takes three edits for long keys, the nearest of two, and the start of one key', () => {
    expect(closestKey('budget_tokens', ['budgetTokens', 'type'])).toBe('budgetTokens');
    expect(closestKey('maxTurn', AGENT_KEYS)).toBe('maxTurns');
    expect(closestKey('ab', ['ac', 'ad'])).toBe('ac');
    expect(closestKey('disallowed', AGENT_KEYS)).toBe('disallowedTools');
    expect(closestKey('zzzz', AGENT_KEYS)).toBeUndefined();
  });
});
