import { describe, expect, it } from 'vitest';
import { closestAgentKey } from './closest-agent-key.js';
import { KNOWN_AGENT_KEYS } from './normalize-agent-fields.js';

describe('closestAgentKey', () => {
  it('names the key a misspelt one meant: case, - and _, one or two edits, two letters swapped', () => {
    const meant = (key: string) => closestAgentKey(key, KNOWN_AGENT_KEYS);
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

  it('names none for keys that are not near one, or near two alike', () => {
    const meant = (key: string) => closestAgentKey(key, KNOWN_AGENT_KEYS);
    expect(['category', 'tags', 'author', 'version', 'title', 'examples', ''].map(meant)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(closestAgentKey('ab', ['ac', 'ad'])).toBeUndefined();
  });
});
