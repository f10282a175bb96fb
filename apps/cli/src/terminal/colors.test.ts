import { describe, expect, it } from 'vitest';
import { colorsEnabled, colorsFor } from './colors.js';

const terminal = { isTTY: true };
const pipe = { isTTY: false };

describe('colors', () => {
  it('colors a terminal, and never a pipe or a file', () => {
    expect(colorsEnabled(terminal, {})).toBe(true);
    expect(colorsEnabled(pipe, {})).toBe(false);
    expect(colorsEnabled({}, {})).toBe(false);
    expect(colorsFor(pipe, {}).red('x')).toBe('x');
    expect(colorsFor(terminal, {}).red('x')).not.toBe('x');
  });

  it('turns colors off for NO_COLOR (any non-empty value) and TERM=dumb', () => {
    expect(colorsEnabled(terminal, { NO_COLOR: '1' })).toBe(false);
    expect(colorsEnabled(terminal, { NO_COLOR: 'false' })).toBe(false);
    expect(colorsEnabled(terminal, { NO_COLOR: '' })).toBe(true);
    expect(colorsEnabled(terminal, { TERM: 'dumb' })).toBe(false);
  });

  it('reads FORCE_COLOR as Node.js does: 1, 2, 3, true or empty force colors on, 0 or false off', () => {
    for (const value of ['1', '2', '3', 'true', '']) {
      expect(colorsEnabled(pipe, { FORCE_COLOR: value }), value).toBe(true);
      expect(colorsEnabled(pipe, { FORCE_COLOR: value, NO_COLOR: '1' }), value).toBe(true);
    }
    for (const value of ['0', 'false']) {
      expect(colorsEnabled(terminal, { FORCE_COLOR: value }), value).toBe(false);
      expect(colorsFor(terminal, { FORCE_COLOR: value }).red('x'), value).toBe('x');
      expect(colorsEnabled(pipe, { FORCE_COLOR: value }), value).toBe(false);
    }
  });
});
