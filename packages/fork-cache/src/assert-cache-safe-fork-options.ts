import { DelegateError, invalidArgument, checkObject } from '@delegate/core';

/** The fork options that decide whether a fork can still share its parent's prompt cache. */
export type CacheSafeForkOptions = {
  /** Output-token cap the fork asks for; changes the thinking budget and so the cache key. */
  maxOutputTokens?: number;
  /** False when the fork does not need the parent's cache (for example a compact summary). Default true. */
  shareCache?: boolean;
  /** Name of the fork, used in the error message. */
  forkLabel?: string;
};

/**
 * Throws `CACHE_UNSAFE` when a fork that shares the parent's cache sets
 * `maxOutputTokens`: the cap also clamps the thinking budget, which is part of the cache
 * key. Allowed when `shareCache` is false.
 */
export function assertCacheSafeForkOptions(options: CacheSafeForkOptions): void {
  checkObject('assertCacheSafeForkOptions()', 'options', options);
  if (options.shareCache !== undefined && typeof options.shareCache !== 'boolean') {
    throw invalidArgument({
      where: 'assertCacheSafeForkOptions()',
      option: 'options.shareCache',
      expected: 'true or false',
      value: options.shareCache,
    });
  }
  const { maxOutputTokens, shareCache = true, forkLabel } = options;
  if (maxOutputTokens === undefined) return;
  const where = forkLabel === undefined ? 'this fork' : `fork "${forkLabel}"`;
  if (!Number.isInteger(maxOutputTokens) || maxOutputTokens <= 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `maxOutputTokens of ${where} is ${maxOutputTokens}; it must be a positive whole number of tokens.`,
      { details: { maxOutputTokens, forkLabel } },
    );
  }
  if (!shareCache) return;
  throw new DelegateError(
    'CACHE_UNSAFE',
    `maxOutputTokens (${maxOutputTokens}) is set on ${where}, which shares the parent's prompt cache. ` +
      'The cap also clamps the thinking budget, and the thinking config is part of the cache key, so the fork would miss the cache. ' +
      'Remove maxOutputTokens, or pass shareCache: false if this fork does not need the cache.',
    { details: { maxOutputTokens, forkLabel } },
  );
}
