import { describe, expect, it } from 'vitest';
import { defaultForkDirective } from './fork-directive.js';

describe('defaultForkDirective', () => {
  it('finds the text after a "Directive:" or "Your directive:" line', () => {
    expect(
      defaultForkDirective('<rules>\n1. be brief\n</rules>\n\nYour directive: fix the lexer'),
    ).toBe('fix the lexer');
    expect(defaultForkDirective('Directive: audit\nthe parser')).toBe('audit\nthe parser');
    expect(defaultForkDirective('directive:   trim me  ')).toBe('trim me');
  });

  it('prefers a <fork-directive> tag', () => {
    expect(defaultForkDirective('Directive: x\n<fork-directive> tagged </fork-directive>')).toBe(
      'tagged',
    );
  });

  it('finds nothing in ordinary text, even when it mentions a directive mid-line', () => {
    expect(defaultForkDirective('Please follow the directive: carefully')).toBeUndefined();
    expect(defaultForkDirective('hello')).toBeUndefined();
  });
});
