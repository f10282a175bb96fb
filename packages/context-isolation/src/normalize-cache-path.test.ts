import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { normalizeCachePath } from './normalize-cache-path.js';

describe('normalizeCachePath', () => {
  it('maps equivalent spellings of one path to one key', () => {
    expect(normalizeCachePath('/repo/a/./b.ts')).toBe('/repo/a/b.ts');
    expect(normalizeCachePath('/repo/a//b.ts')).toBe('/repo/a/b.ts');
    expect(normalizeCachePath('/repo/c/../a/b.ts')).toBe('/repo/a/b.ts');
    expect(normalizeCachePath('/repo/a/')).toBe('/repo/a');
    expect(normalizeCachePath('a/./b')).toBe('a/b');
  });

  it('keeps the root and relative paths as they are', () => {
    expect(normalizeCachePath('/')).toBe('/');
    expect(normalizeCachePath('src/index.ts')).toBe('src/index.ts');
  });

  it('is idempotent', () => {
    const segment = fc.constantFrom('a', 'b', '.', '..', '', 'dir');
    fc.assert(
      fc.property(fc.boolean(), fc.array(segment, { maxLength: 8 }), (absolute, parts) => {
        const path = (absolute ? '/' : '') + parts.join('/');
        const once = normalizeCachePath(path);
        expect(normalizeCachePath(once)).toBe(once);
        expect(normalizeCachePath(`${once}/./`)).toBe(once);
      }),
    );
  });
});
