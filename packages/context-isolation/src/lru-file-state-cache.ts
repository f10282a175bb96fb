import { Buffer } from 'node:buffer';
import { DelegateError, type FileState, type FileStateCache } from '@delegate/core';
import { normalizeCachePath } from './normalize-cache-path.js';

/** Bounds of a file-state cache; the least recently used entry goes first when one is passed. */
export type FileStateCacheLimits = {
  /** Most entries kept at once. */
  maxEntries: number;
  /** Most bytes of `content` kept at once, counted in UTF-8. */
  maxBytes: number;
};

/** Options of {@link LruFileStateCache}; every field has a default. */
export type FileStateCacheOptions = Partial<FileStateCacheLimits> & {
  /** Turns a path into its cache key; default {@link normalizeCachePath}. */
  normalizePath?: (path: string) => string;
};

/** Default bounds: 100 entries and 25 MiB of content. */
export const DEFAULT_FILE_STATE_CACHE_LIMITS: Readonly<FileStateCacheLimits> = Object.freeze({
  maxEntries: 100,
  maxBytes: 25 * 1024 * 1024,
});

type Entry = { readonly state: Readonly<FileState>; readonly bytes: number };

/** Entries shared by a cache and its clones until one of them writes. */
type Store = { entries: Map<string, Entry>; bytes: number; holders: number };

/** Keys read while the store was shared, newest first; immutable, so clones share it. */
type Touch = { readonly key: string; readonly next: Touch | undefined; readonly length: number };

/**
 * A bounded LRU file-read cache. `clone()` is O(1): the clone shares the entries
 * until either side writes, and the writer then copies them once (copy on write).
 * Stored states are frozen copies, so a clone and its original never see each
 * other's changes. Map order is recency order: least recently used first.
 */
export class LruFileStateCache implements FileStateCache {
  /** Most entries kept at once. */
  readonly maxEntries: number;
  /** Most UTF-8 bytes of content kept at once. */
  readonly maxBytes: number;
  readonly #normalizePath: (path: string) => string;
  #store: Store = { entries: new Map(), bytes: 0, holders: 1 };
  // Reordering a shared map on a read would change the eviction order of every other
  // holder, so reads of a shared store are recorded here and applied when this cache
  // gets its own copy. The list is persistent, so `clone()` shares it in O(1).
  #touches: Touch | undefined;

  constructor(options: FileStateCacheOptions = {}) {
    this.maxEntries = checkLimit('maxEntries', options.maxEntries, true);
    this.maxBytes = checkLimit('maxBytes', options.maxBytes, false);
    this.#normalizePath = options.normalizePath ?? normalizeCachePath;
  }

  /** Number of entries. */
  get size(): number {
    return this.#store.entries.size;
  }

  /** Total UTF-8 bytes of the stored contents. */
  get byteSize(): number {
    return this.#store.bytes;
  }

  /** Returns the (frozen) state of a path and marks it as the most recently used. */
  get(path: string): FileState | undefined {
    const key = this.#normalizePath(path);
    const entry = this.#store.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.#store.holders > 1) {
      const length = (this.#touches?.length ?? 0) + 1;
      this.#touches = { key, next: this.#touches, length };
      // Repeated reads of the same keys would grow the list without bound; rebuilding
      // it without duplicates after this many reads keeps each read O(1) amortized.
      if (length > 2 * this.#store.entries.size + 16) this.#touches = compactTouches(this.#touches);
    } else {
      this.#applyTouches(this.#store.entries);
      this.#store.entries.delete(key);
      this.#store.entries.set(key, entry);
    }
    return entry.state as FileState;
  }

  /** True when the path has an entry; does not change recency. */
  has(path: string): boolean {
    return this.#store.entries.has(this.#normalizePath(path));
  }

  /**
   * Stores a frozen copy of `state` as the most recently used entry, then evicts the
   * least recently used entries until both limits hold. A state whose content alone
   * exceeds `maxBytes` is not stored, and any older entry for the path is dropped.
   */
  set(path: string, state: FileState): this {
    const key = this.#normalizePath(path);
    const bytes = Buffer.byteLength(state.content, 'utf8');
    const entries = this.#writableEntries();
    const previous = entries.get(key);
    if (previous !== undefined) {
      entries.delete(key);
      this.#store.bytes -= previous.bytes;
    }
    if (bytes > this.maxBytes) return this;
    entries.set(key, { state: Object.freeze({ ...state }), bytes });
    this.#store.bytes += bytes;
    this.#evict(entries);
    return this;
  }

  /** Removes the entry of a path; true when there was one. */
  delete(path: string): boolean {
    const key = this.#normalizePath(path);
    if (!this.#store.entries.has(key)) return false;
    const entries = this.#writableEntries();
    const previous = entries.get(key);
    entries.delete(key);
    this.#store.bytes -= previous?.bytes ?? 0;
    return true;
  }

  /** Removes every entry (clones keep theirs). */
  clear(): void {
    if (this.#store.holders > 1) {
      this.#store.holders -= 1;
      this.#store = { entries: new Map(), bytes: 0, holders: 1 };
    } else {
      this.#store.entries.clear();
      this.#store.bytes = 0;
    }
    this.#touches = undefined;
  }

  /** Returns an independent copy with the same limits in O(1); entries are copied on the first write of either side. */
  clone(): LruFileStateCache {
    const copy = new LruFileStateCache({
      maxEntries: this.maxEntries,
      maxBytes: this.maxBytes,
      normalizePath: this.#normalizePath,
    });
    this.#store.holders += 1;
    copy.#store = this.#store;
    copy.#touches = this.#touches;
    return copy;
  }

  /**
   * Iterates the keys from least to most recently used, as they were when called. The
   * list is a snapshot: a `get` moves its key to the end, so walking the live order
   * while reading each entry (`for (const path of cache.keys()) cache.get(path)`) would
   * meet every key again and never finish.
   */
  keys(): IterableIterator<string> {
    if (this.#touches === undefined) return [...this.#store.entries.keys()].values();
    return keysWithTouches(this.#store.entries, touchedOldestFirst(this.#touches));
  }

  #writableEntries(): Map<string, Entry> {
    const store = this.#store;
    if (store.holders > 1) {
      store.holders -= 1;
      const entries = new Map(store.entries);
      this.#applyTouches(entries);
      this.#store = { entries, bytes: store.bytes, holders: 1 };
    } else {
      this.#applyTouches(store.entries);
    }
    return this.#store.entries;
  }

  #applyTouches(entries: Map<string, Entry>): void {
    if (this.#touches === undefined) return;
    for (const key of touchedOldestFirst(this.#touches)) {
      const entry = entries.get(key);
      if (entry === undefined) continue;
      entries.delete(key);
      entries.set(key, entry);
    }
    this.#touches = undefined;
  }

  #evict(entries: Map<string, Entry>): void {
    while (entries.size > this.maxEntries || this.#store.bytes > this.maxBytes) {
      const oldest = entries.entries().next();
      if (oldest.done === true) return;
      const [key, entry] = oldest.value;
      entries.delete(key);
      this.#store.bytes -= entry.bytes;
    }
  }
}

/** Returns the distinct touched keys, least recently read first. */
function touchedOldestFirst(touches: Touch): string[] {
  const seen = new Set<string>();
  const newestFirst: string[] = [];
  for (let touch: Touch | undefined = touches; touch !== undefined; touch = touch.next) {
    if (seen.has(touch.key)) continue;
    seen.add(touch.key);
    newestFirst.push(touch.key);
  }
  return newestFirst.reverse();
}

function compactTouches(touches: Touch): Touch | undefined {
  let compacted: Touch | undefined;
  for (const key of touchedOldestFirst(touches)) {
    compacted = { key, next: compacted, length: (compacted?.length ?? 0) + 1 };
  }
  return compacted;
}

function keysWithTouches(entries: Map<string, Entry>, touched: string[]): IterableIterator<string> {
  const moved = new Set(touched);
  const keys = [...entries.keys()].filter((key) => !moved.has(key));
  return [...keys, ...touched].values();
}

function checkLimit(
  name: keyof FileStateCacheLimits,
  value: number | undefined,
  integer: boolean,
): number {
  if (value === undefined) return DEFAULT_FILE_STATE_CACHE_LIMITS[name];
  const valid =
    value === Number.POSITIVE_INFINITY ||
    (value >= 1 && (integer ? Number.isInteger(value) : Number.isFinite(value)));
  if (!valid) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `File-state cache option ${name} must be ${integer ? 'a positive integer' : 'a number of at least 1'} or Infinity, got ${String(value)}. Pass a value such as ${DEFAULT_FILE_STATE_CACHE_LIMITS[name]}, or leave it out for the default.`,
      { details: { option: name, value } },
    );
  }
  return value;
}
