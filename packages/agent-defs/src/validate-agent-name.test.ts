import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateAgentName } from './validate-agent-name.js';

describe('validateAgentName', () => {
  it('accepts ordinary names, plugin-qualified names and non-Latin letters', () => {
    for (const name of ['code-reviewer', 'Explore', 'acme:review', 'ревьюер', 'レビュー']) {
      expect(validateAgentName(name)).toBeUndefined();
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

  it('never accepts a name that holds a separator, a control or a format character', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.constantFrom('/', '\\', '\u0000', '\n', '\u200b', '\u2066', '\u00ad'),
        fc.string(),
        (before, bad, after) => validateAgentName(`${before}${bad}${after}`) !== undefined,
      ),
    );
  });
});
