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

  it('turns colors on for FORCE_COLOR unless it is 0 or empty', () => {
    expect(colorsEnabled(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorsEnabled(pipe, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
    expect(colorsEnabled(terminal, { FORCE_COLOR: '0' })).toBe(true);
    expect(colorsEnabled(pipe, { FORCE_COLOR: '0' })).toBe(false);
    expect(colorsEnabled(pipe, { FORCE_COLOR: '' })).toBe(false);
  });
});
