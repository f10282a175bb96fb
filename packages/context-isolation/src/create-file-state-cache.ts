import { LruFileStateCache, type FileStateCacheOptions } from './lru-file-state-cache.js';

/** Returns an empty bounded LRU file-read cache (defaults: 100 entries, 25 MiB). */
export function createFileStateCache(options: FileStateCacheOptions = {}): LruFileStateCache {
  return new LruFileStateCache(options);
}
