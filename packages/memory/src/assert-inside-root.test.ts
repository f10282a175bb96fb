import { join, resolve } from 'node:path';
import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { assertInsideRoot } from './assert-inside-root.js';

const root = resolve('/memory/root');

describe('assertInsideRoot', () => {
  it('accepts paths inside the root', () => {
    expect(() => assertInsideRoot(root, join(root, 'agent'))).not.toThrow();
    expect(() => assertInsideRoot(root, join(root, 'agent', 'deep'))).not.toThrow();
    expect(() => assertInsideRoot(root, join(root, '..agent'))).not.toThrow();
  });

  it.each([
    ['the root itself', root],
    ['its parent', join(root, '..')],
    ['a sibling', join(root, '..', 'other')],
    ['a sibling sharing the prefix', `${root}-evil`],
    ['a traversal', join(root, 'agent', '..', '..', 'etc')],
    ['an unrelated absolute path', resolve('/etc/passwd')],
  ])('refuses %s with PATH_ESCAPE', (_label, target) => {
    let thrown: unknown;
    try {
      assertInsideRoot(root, target);
    } catch (error) {
      thrown = error;
    }
    expect(DelegateError.hasCode(thrown, 'PATH_ESCAPE')).toBe(true);
  });
});
