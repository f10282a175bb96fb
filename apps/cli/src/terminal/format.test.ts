import { describe, expect, it } from 'vitest';
import { oneLine, printable } from './format.js';

describe('oneLine', () => {
  it('folds whitespace, cuts by character without splitting an emoji, and shows controls as ?', () => {
    expect(oneLine('  a\n\tb  c ', 10)).toBe('a b c');
    expect(oneLine('ab🚀🚀🚀🚀', 4)).toBe('ab🚀…');
    expect(oneLine('🚀🚀', 2)).toBe('🚀🚀');
    expect(oneLine('x\u001b[2Jy', 10)).toBe('x?[2Jy');
  });
});

describe('printable', () => {
  it('replaces C0 and C1 controls and bidirectional overrides, and keeps other text', () => {
    expect(printable('a\u0007b\u009bc\u202ed\u2066e')).toBe('a?b?c?d?e');
    expect(printable('检查 · ✓ émoji 🚀')).toBe('检查 · ✓ émoji 🚀');
  });
});
