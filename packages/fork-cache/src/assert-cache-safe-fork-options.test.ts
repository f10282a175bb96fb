import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { assertCacheSafeForkOptions } from './assert-cache-safe-fork-options.js';

function thrown(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('assertCacheSafeForkOptions', () => {
  it('accepts a cache-sharing fork without maxOutputTokens', () => {
    expect(() => assertCacheSafeForkOptions({})).not.toThrow();
    expect(() => assertCacheSafeForkOptions({ shareCache: true })).not.toThrow();
  });

  it('refuses maxOutputTokens on a fork that shares the cache, with CACHE_UNSAFE', () => {
    const error = thrown(() =>
      assertCacheSafeForkOptions({ maxOutputTokens: 4096, forkLabel: 'post-turn-summary' }),
    );
    expect(DelegateError.hasCode(error, 'CACHE_UNSAFE')).toBe(true);
    const message = (error as DelegateError).message;
    expect(message).toContain('4096');
    expect(message).toContain('post-turn-summary');
    expect(message).toContain('shareCache: false');
    // Sharing is the default, so leaving shareCache out refuses too.
    expect(
      DelegateError.hasCode(
        thrown(() => assertCacheSafeForkOptions({ maxOutputTokens: 1 })),
        'CACHE_UNSAFE',
      ),
    ).toBe(true);
  });

  it('allows maxOutputTokens when the caller opts out of cache sharing', () => {
    expect(() =>
      assertCacheSafeForkOptions({ maxOutputTokens: 2048, shareCache: false }),
    ).not.toThrow();
  });

  it('rejects a cap that is not a positive whole number', () => {
    for (const maxOutputTokens of [0, -5, 1.5, Number.NaN]) {
      const error = thrown(() =>
        assertCacheSafeForkOptions({ maxOutputTokens, shareCache: false }),
      );
      expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    }
  });
});
