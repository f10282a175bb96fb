import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, splitGlobBase } from './glob-pattern.js';

function matches(pattern: string, path: string, matchBase = false): boolean {
  return compileGlob(pattern, { matchBase }).test(path);
}

describe('compileGlob', () => {
  it('lets ** alone match names with line terminators', () => {
    for (const path of ['a\nb.txt', 'a\rb', 'd/a\u2028b', 'a\u2029b']) {
      expect({ path, matched: matches('**', path) }).toEqual({ path, matched: true });
    }
  });

  it('keeps * and ? inside one path segment', () => {
    expect(matches('*.ts', 'index.ts')).toBe(true);
    expect(matches('*.ts', 'src/index.ts')).toBe(false);
    expect(matches('src/?.ts', 'src/a.ts')).toBe(true);
    expect(matches('src/?.ts', 'src/ab.ts')).toBe(false);
  });

  it('lets ** span zero or more directories', () => {
    expect(matches('**/*.ts', 'index.ts')).toBe(true);
    expect(matches('**/*.ts', 'a/b/c/index.ts')).toBe(true);
    expect(matches('src/**/test/*.ts', 'src/test/a.ts')).toBe(true);
    expect(matches('src/**/test/*.ts', 'src/x/y/test/a.ts')).toBe(true);
    expect(matches('src/**', 'src/x/y.ts')).toBe(true);
    expect(matches('src/**/*.ts', 'lib/x.ts')).toBe(false);
  });

  it('expands braces, nested ones too', () => {
    expect(matches('*.{ts,tsx}', 'a.tsx')).toBe(true);
    expect(matches('*.{ts,tsx}', 'a.js')).toBe(false);
    expect(matches('{src,lib/{a,b}}/*.js', 'lib/b/x.js')).toBe(true);
    expect(matches('{src,lib/{a,b}}/*.js', 'lib/c/x.js')).toBe(false);
  });

  it('supports character classes, ranges, negation and escapes', () => {
    expect(matches('file[0-9].txt', 'file7.txt')).toBe(true);
    expect(matches('file[0-9].txt', 'filex.txt')).toBe(false);
    expect(matches('file[!0-9].txt', 'filex.txt')).toBe(true);
    expect(matches('file[!0-9].txt', 'file7.txt')).toBe(false);
    expect(matches('a[/]b', 'a/b')).toBe(false);
    expect(matches('\\*.txt', '*.txt')).toBe(true);
    expect(matches('\\*.txt', 'a.txt')).toBe(false);
    expect(matches('a+b(c).txt', 'a+b(c).txt')).toBe(true);
  });

  it('matches the file name at any depth with matchBase when the pattern has no slash', () => {
    expect(matches('*.md', 'docs/deep/readme.md', true)).toBe(true);
    expect(matches('docs/*.md', 'other/docs/readme.md', true)).toBe(false);
  });

  it('matches a path made of literal segments exactly (property)', () => {
    // Walked relative paths never hold `.` or `..` segments.
    const segment = fc
      .stringMatching(/^[a-zA-Z0-9_.+()$^-]{1,8}$/)
      .filter((name) => name !== '.' && name !== '..');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), (segments) => {
        const path = segments.join('/');
        expect(matches(path, path)).toBe(true);
        expect(matches(path, `${path}x`)).toBe(false);
        expect(matches(`**/${segments[segments.length - 1] ?? ''}`, path)).toBe(true);
      }),
    );
  });

  it('never lets * cross a slash (property)', () => {
    const name = fc.stringMatching(/^[a-z]{1,6}$/);
    fc.assert(
      fc.property(name, name, name, (first, second, extension) => {
        expect(matches(`*.${extension}`, `${first}/${second}.${extension}`)).toBe(false);
        expect(matches(`*/*.${extension}`, `${first}/${second}.${extension}`)).toBe(true);
      }),
    );
  });
});

describe('splitGlobBase', () => {
  it('splits off the leading literal directories', () => {
    expect(splitGlobBase('src/lib/**/*.ts')).toEqual({ base: 'src/lib', rest: '**/*.ts' });
    expect(splitGlobBase('**/*.ts')).toEqual({ base: '', rest: '**/*.ts' });
    expect(splitGlobBase('README.md')).toEqual({ base: '', rest: 'README.md' });
    expect(splitGlobBase('/abs/dir/*.md')).toEqual({ base: '/abs/dir', rest: '*.md' });
  });
});
