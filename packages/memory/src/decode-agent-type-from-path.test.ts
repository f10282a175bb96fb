import { describe, expect, it } from 'vitest';
import { decodeAgentTypeFromPath } from './decode-agent-type-from-path.js';
import { sanitizeAgentTypeForPath } from './sanitize-agent-type-for-path.js';

describe('decodeAgentTypeFromPath', () => {
  it.each(['code-reviewer', 'a/b', 'Foo', 'con', 'plugin:agent', '..', 'ünïcödé', '😀', '\ud800x'])(
    'decodes the folder of %j back to it',
    (agentType) => {
      expect(decodeAgentTypeFromPath(sanitizeAgentTypeForPath(agentType))).toBe(agentType);
    },
  );

  it.each([
    ['a folder made by hand with uppercase', 'Foo'],
    ['a needless escape', '%61'],
    ['lowercase hex', 'a%2fb'],
    ['a broken escape', 'a%2'],
    ['an escape that is not hex', '%ZZ'],
    ['invalid UTF-8', '%FF'],
    ['a cut name', `${'a'.repeat(83)}~0123456789abcdef`],
    ['an empty name', ''],
    ['a device name', 'con'],
    ['a dotted name', 'notes.bak'],
  ])('returns undefined for %s', (_label, folderName) => {
    expect(decodeAgentTypeFromPath(folderName)).toBeUndefined();
  });
});
