import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findRequiredLiteral } from './required-literal.js';

const patterns = [
  'hello',
  'foo.*bar',
  'fooo?bar',
  'ab+c',
  'a{0,2}bcd',
  'x{2}yz',
  'function\\s+\\w+',
  'import .* from',
  '(foo|bar)baz',
  'foo|bar',
  '\\.ts$',
  '^export const',
  '[abc]def',
  'log\\(',
  'colou?r',
  'a*bc*d',
  'TODO(\\(\\w+\\))?:',
];

describe('findRequiredLiteral', () => {
  it('finds the longest literal every match must contain', () => {
    expect(findRequiredLiteral('hello')).toBe('hello');
    expect(findRequiredLiteral('foo.*barbaz')).toBe('barbaz');
    expect(findRequiredLiteral('colou?r')).toBe('colo');
    expect(findRequiredLiteral('log\\(')).toBe('log(');
    expect(findRequiredLiteral('foo|bar')).toBeUndefined();
    expect(findRequiredLiteral('\\w+')).toBeUndefined();
  });

  it('returns a substring of every string the regex matches (property)', () => {
    const alphabet = fc.constantFrom(
      ...'abcdefhlorxyz.TODO:()| \n'.split(''),
      'foo',
      'bar',
      'baz',
      'hello',
      'export const',
      'import x from',
      'function f',
      'colour',
      'color',
      '.ts',
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...patterns),
        fc.array(alphabet, { maxLength: 12 }),
        (pattern, pieces) => {
          const text = pieces.join('');
          const literal = findRequiredLiteral(pattern);
          if (literal !== undefined && new RegExp(pattern).test(text)) {
            expect(text).toContain(literal);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
