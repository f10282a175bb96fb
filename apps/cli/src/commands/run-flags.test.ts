import { PermissionMode } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../exit-codes.js';
import { CLI_PERMISSION_MODES } from './run-choices.js';
import { parseRunFlags } from './run-flags.js';

describe('run flags', () => {
  it('offers every permission mode but the forks-only bubble', () => {
    expect([...CLI_PERMISSION_MODES].sort()).toEqual(
      PermissionMode.options.filter((mode) => mode !== 'bubble').sort(),
    );
  });

  it('names the flag of a bad value in kebab case', () => {
    expect(parseRunFlags({ maxTurns: 3, outputFormat: 'json' })).toMatchObject({
      maxTurns: 3,
      outputFormat: 'json',
    });
    expect(() => parseRunFlags({ maxTurns: 0 })).toThrow(UsageError);
    expect(() => parseRunFlags({ maxTurns: 0 })).toThrow(/^--max-turns: /);
    expect(() => parseRunFlags({ permissionMode: 'bubble' })).toThrow(/^--permission-mode: /);
  });

  it('says what an empty flag value should have been, naming the flag', () => {
    expect(() => parseRunFlags({ resume: '' })).toThrow(
      '--resume: expected the id of a recorded session (`delegate transcripts list` shows them), not an empty value.',
    );
    expect(() => parseRunFlags({ addDir: ['..', ''] })).toThrow(
      /^--add-dir: expected a directory, not an empty value\.$/,
    );
  });
});
