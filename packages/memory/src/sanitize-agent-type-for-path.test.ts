import { spawnSync } from 'node:child_process';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DelegateError } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAgentTypeFromPath } from './decode-agent-type-from-path.js';
import {
  MAX_AGENT_FOLDER_NAME_LENGTH,
  sanitizeAgentTypeForPath,
} from './sanitize-agent-type-for-path.js';

const root = resolve('/memory-root');

/** Strings rich in what breaks paths: separators, dots, drive letters, controls, unicode, lone surrogates. */
const trickyCharacter = fc.oneof(
  fc.constantFrom(
    '/',
    '\\',
    '.',
    '..',
    ':',
    'C:',
    '%',
    '%2F',
    '~',
    ' ',
    '\0',
    '\n',
    '\u007f',
    'A',
    'a',
    'con',
    'é',
    '😀',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 3 }),
);
const agentTypes = fc.oneof(
  fc.array(trickyCharacter, { minLength: 1, maxLength: 40 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 160 }),
  fc.stringMatching(/^[a-z0-9_-]{1,150}$/),
);

function staysInside(folderName: string): boolean {
  const path = relative(root, join(root, folderName));
  return path !== '' && !path.startsWith(`..${sep}`) && path !== '..' && !isAbsolute(path);
}

function assertSafe(folderName: string): void {
  expect(folderName).not.toMatch(/[/\\:]/);
  expect([...folderName].some((character) => character < ' ' || character === '\u007f')).toBe(
    false,
  );
  expect(folderName).not.toMatch(/[. ]$/);
  expect(folderName).not.toBe('.');
  expect(folderName).not.toBe('..');
  expect(folderName.length).toBeGreaterThan(0);
  expect(folderName.startsWith('-')).toBe(false);
  // Valid in a git branch name: no `~ ^ : ? * [ \\`, no `..`, no `@{`, no `.lock` end.
  expect(folderName).not.toMatch(/[~^:?*[\\\s]|\.\.|@\{|\.lock$|^\./);
  expect(folderName.length).toBeLessThanOrEqual(MAX_AGENT_FOLDER_NAME_LENGTH);
  expect(staysInside(folderName)).toBe(true);
  // Windows device names are refused with or without an extension.
  expect(folderName).not.toMatch(/^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i);
}

describe('sanitizeAgentTypeForPath', () => {
  it('keeps plain lowercase names readable as they are', () => {
    for (const name of ['code-reviewer', 'general_purpose', 'agent2', 'a']) {
      expect(sanitizeAgentTypeForPath(name)).toBe(name);
    }
  });

  it('throws INVALID_ARGUMENT for an empty agent type', () => {
    expect(() => sanitizeAgentTypeForPath('')).toThrow(DelegateError);
    try {
      sanitizeAgentTypeForPath('');
    } catch (error) {
      expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    }
  });

  it.each([
    '..',
    '.',
    '../../etc/passwd',
    '..\\..\\windows',
    '/etc/passwd',
    'a/b',
    'a\\b',
    'C:',
    'C:\\Windows',
    'c:evil',
    'nul\0byte',
    'line\nbreak',
    'tab\there',
    '\u001b[31m',
    'CON',
    'con',
    'Con',
    'nul',
    'NUL',
    'com1',
    'COM1',
    'lpt1',
    'LPT9',
    'aux',
    'prn',
    'con.txt',
    'CON.TXT',
    'nul.tar.gz',
    'trailing.',
    'trailing ',
    'trailing. .',
    ' leading',
    'x'.repeat(500),
    '/'.repeat(300),
    'é'.repeat(200),
  ])('makes %j a safe single folder name', (agentType) => {
    const folderName = sanitizeAgentTypeForPath(agentType);
    assertSafe(folderName);
  });

  it('encodes unsafe characters reversibly and readably', () => {
    expect(sanitizeAgentTypeForPath('a/b')).toBe('a%2Fb');
    expect(sanitizeAgentTypeForPath('a%2Fb')).toBe('a%252%46b');
    expect(sanitizeAgentTypeForPath('plugin:reviewer')).toBe('plugin%3Areviewer');
    expect(sanitizeAgentTypeForPath('Foo')).toBe('%46oo');
    expect(sanitizeAgentTypeForPath('con')).toBe('%63on');
  });

  it('maps tricky look-alike pairs to different folders', () => {
    const groups = [
      ['a/b', 'a%2Fb', 'a_b', 'a-b', 'a\\b', 'a:b', 'a%2fb'],
      ['Foo', 'foo', 'FOO', 'fOO', '%46oo'],
      ['con', 'CON', 'con.txt', '%63on', 'c%6Fn'],
      ['.', '..', '%2E', '...', '. '],
      ['é', 'e\u0301', 'É'],
      ['\ud800', '\udfff', '\ufffd'],
    ];
    for (const group of groups) {
      const folders = group.map(sanitizeAgentTypeForPath);
      expect(new Set(folders).size).toBe(group.length);
      // Folders must also differ when the file system ignores case.
      expect(new Set(folders.map((folder) => folder.toLowerCase())).size).toBe(group.length);
    }
  });

  it('keeps long names that share a 100-character prefix apart, within the length cap', () => {
    const prefix = 'p'.repeat(100);
    const names = [
      prefix,
      `${prefix}a`,
      `${prefix}b`,
      `${prefix}/x`,
      `${prefix}${'z'.repeat(400)}`,
    ];
    const folders = names.map(sanitizeAgentTypeForPath);
    expect(new Set(folders).size).toBe(names.length);
    for (const folder of folders) assertSafe(folder);
    expect(folders[1]?.startsWith('p'.repeat(50))).toBe(true);
  });

  it('never cuts through a %XX escape when shortening', () => {
    for (let offset = 0; offset < 6; offset++) {
      const folder = sanitizeAgentTypeForPath('a'.repeat(offset) + '/'.repeat(60));
      const prefix = folder.split('+')[0] ?? '';
      expect(prefix).toMatch(/^(?:[a-z]|%[0-9A-F]{2})*$/);
    }
  });

  it('encodes a leading - so a name never reads as an option', () => {
    expect(sanitizeAgentTypeForPath('-rf')).toBe('%2Drf');
    expect(sanitizeAgentTypeForPath('--force')).toBe('%2D-force');
    expect(decodeAgentTypeFromPath('%2Drf')).toBe('-rf');
    expect(decodeAgentTypeFromPath('-rf')).toBeUndefined();
  });

  it('gives names git accepts as branch names (checked with git check-ref-format)', () => {
    const names = [
      ...fc.sample(agentTypes, { numRuns: 40, seed: 3 }),
      'plugin:reviewer',
      '../../etc',
      '-rf',
      'a'.repeat(300),
      '.lock',
      'x.lock',
      '@{u}',
      'a..b',
    ];
    for (const agentType of names) {
      const folder = sanitizeAgentTypeForPath(agentType);
      const check = spawnSync('git', ['check-ref-format', '--branch', `delegate/${folder}`], {
        encoding: 'utf8',
      });
      expect({ agentType, folder, accepted: check.status === 0 }).toEqual({
        agentType,
        folder,
        accepted: true,
      });
    }
  });

  it('property: every result is a safe folder name inside its root', () => {
    fc.assert(
      fc.property(agentTypes, (agentType) => {
        assertSafe(sanitizeAgentTypeForPath(agentType));
      }),
      { numRuns: 1000 },
    );
  });

  it('property: different agent types give different folders, even ignoring case', () => {
    fc.assert(
      fc.property(agentTypes, agentTypes, (first, second) => {
        fc.pre(first !== second);
        const left = sanitizeAgentTypeForPath(first);
        const right = sanitizeAgentTypeForPath(second);
        expect(left).not.toBe(right);
        expect(left.toLowerCase()).not.toBe(right.toLowerCase());
      }),
      { numRuns: 1000 },
    );
  });

  it('property: near-identical pairs (one character changed) still differ', () => {
    fc.assert(
      fc.property(agentTypes, trickyCharacter, fc.nat(), (agentType, inserted, position) => {
        const at = position % (agentType.length + 1);
        const changed = agentType.slice(0, at) + inserted + agentType.slice(at);
        expect(sanitizeAgentTypeForPath(changed)).not.toBe(sanitizeAgentTypeForPath(agentType));
      }),
      { numRuns: 500 },
    );
  });

  it('property: every folder name that was not shortened decodes back to its agent type', () => {
    fc.assert(
      fc.property(agentTypes, (agentType) => {
        const folder = sanitizeAgentTypeForPath(agentType);
        const decoded = decodeAgentTypeFromPath(folder);
        if (folder.includes('+')) expect(decoded).toBeUndefined();
        else expect(decoded).toBe(agentType);
      }),
      { numRuns: 1000 },
    );
  });
});
