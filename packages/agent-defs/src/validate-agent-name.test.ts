import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPathSafeAgentName, validateAgentName } from './validate-agent-name.js';

describe('validateAgentName', () => {
  it('accepts what Claude Code accepts: ordinary names, non-Latin letters, spaces and path characters', () => {
    for (const name of [
      'code-reviewer',
      'Explore',
      'ревьюер',
      'レビュー',
      'a b',
      'team/review',
      '..',
      'a\\b',
      'x'.repeat(256),
    ]) {
      expect(validateAgentName(name), name).toBeUndefined();
    }
  });

  it('refuses what Claude Code refuses: a leading dash, a colon, more than 256 characters', () => {
    expect(validateAgentName('-x')).toBe("starts with '-'");
    expect(validateAgentName('acme:review')).toBe("contains ':'");
    expect(validateAgentName('x'.repeat(257))).toBe('is longer than 256 characters');
    expect(validateAgentName('')).toBe('is empty');
  });

  it('tells which names are not safe as one path segment', () => {
    for (const name of ['team/review', 'a\\b', '..', '.', ' padded', 'trailing.', '~home']) {
      expect(isPathSafeAgentName(name), name).toBe(false);
    }
    for (const name of ['code-reviewer', 'a b', 'v1.2-agent']) {
      expect(isPathSafeAgentName(name), name).toBe(true);
    }
  });

  it('refuses names with invisible characters that would make them look like another name', () => {
    for (const name of [
      'Explore\u200b', // zero-width space
      'Exp\u200dlore', // zero-width joiner
      '\u202eerolpxE', // right-to-left override
      '\ufeffExplore', // byte-order mark
      'Explore\u2028', // line separator
      'Explore\u{e0041}', // tag character
    ]) {
      expect(validateAgentName(name)).toMatch(/invisible/);
    }
  });

  it('refuses names that would be read as object machinery', () => {
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      expect(validateAgentName(name)).toBe('is reserved');
    }
  });

  it('never accepts a name that holds a colon, a control or a format character', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom(':', '\u0000', '\n', '\u200b', '\u2066', '\u00ad'),
        fc.string(),
        (before, bad, after) => validateAgentName(`${before}${bad}${after}`) !== undefined,
      ),
    );
  });
});
