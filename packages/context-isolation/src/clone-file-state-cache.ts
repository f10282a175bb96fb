import type { FileStateCache } from '@delegate/core';

/** Returns an independent copy of a file-read cache (O(1) for {@link LruFileStateCache}). */
export function cloneFileStateCache(cache: FileStateCache): FileStateCache {
  return cache.clone();
}
