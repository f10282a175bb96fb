import { describe, expect, it } from 'vitest';
import { formatTable, oneLine, printable, styled } from './format.js';

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

describe('formatTable', () => {
  const red = (text: string): string => `\u001b[31m${text}\u001b[39m`;

  it('shows every escape sequence inside a cell as text, color sequences included', () => {
    // A settings value or folder name from a cloned repository: conceal, then a title change.
    const [, row] = formatTable([
      ['setting', 'value'],
      ['model', 'sonnet\u001b[8m hidden\u001b]0;owned\u0007'],
    ]);
    expect(row).toBe('model    sonnet?[8m hidden?]0;owned?');
    expect(row).not.toContain('\u001b');
  });

  it('colors styled cells and parts of cells, and lines columns up by what shows', () => {
    const lines = formatTable(
      [
        ['agent', 'notes', 'n'],
        [styled('reviewer', red), ['overrides a; ', styled('denied', red)], '1'],
        ['x', styled('', red), '22'],
      ],
      { rightAlign: [2] },
    );
    // Widths 8, 19 ('overrides a; denied') and 2; two spaces between columns.
    expect(lines).toEqual([
      `agent${' '.repeat(3 + 2)}notes${' '.repeat(14 + 2)} n`,
      `${red('reviewer')}  overrides a; ${red('denied')}   1`,
      `x${' '.repeat(7 + 2 + 19 + 2)}22`,
    ]);
  });
});
