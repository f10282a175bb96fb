import { Buffer } from 'node:buffer';
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { FileState } from '@delegate/core';
import { cloneFileStateCache } from './clone-file-state-cache.js';
import { createFileStateCache } from './create-file-state-cache.js';
import { DEFAULT_FILE_STATE_CACHE_LIMITS, LruFileStateCache } from './lru-file-state-cache.js';

function state(content: string, timestamp = 1): FileState {
  return { content, timestamp };
}

describe('LruFileStateCache', () => {
  it('finds an entry under any spelling of its path', () => {
    const cache = createFileStateCache();
    cache.set('/repo/a/./b.ts', state('x'));
    expect(cache.get('/repo/a/b.ts')?.content).toBe('x');
    expect(cache.has('/repo/c/../a//b.ts')).toBe(true);
    expect(cache.delete('/repo/a/b.ts/')).toBe(true);
    expect(cache.size).toBe(0);
  });

  it('keeps 100 entries and 25 MiB by default', () => {
    expect(DEFAULT_FILE_STATE_CACHE_LIMITS).toEqual({ maxEntries: 100, maxBytes: 26_214_400 });
    const cache = createFileStateCache();
    for (let index = 0; index < 150; index++) cache.set(`/f${index}`, state('x'));
    expect(cache.size).toBe(100);
    expect(cache.has('/f49')).toBe(false);
    expect(cache.has('/f50')).toBe(true);
  });

  it('evicts the least recently used entry, counting a read as a use', () => {
    const cache = createFileStateCache({ maxEntries: 3 });
    cache.set('/a', state('a')).set('/b', state('b')).set('/c', state('c'));
    cache.get('/a');
    cache.set('/d', state('d'));
    expect([...cache.keys()]).toEqual(['/c', '/a', '/d']);
  });

  it('does not count has() as a use', () => {
    const cache = createFileStateCache({ maxEntries: 2 });
    cache.set('/a', state('a')).set('/b', state('b'));
    cache.has('/a');
    cache.set('/c', state('c'));
    expect(cache.has('/a')).toBe(false);
  });

  it('counts content bytes in UTF-8 and evicts to stay under maxBytes', () => {
    const cache = createFileStateCache({ maxBytes: 10 });
    cache.set('/accents', state('ééééé'));
    expect(cache.byteSize).toBe(10);
    cache.set('/one', state('x'));
    expect(cache.has('/accents')).toBe(false);
    expect(cache.byteSize).toBe(1);
  });

  it('replacing an entry updates the byte count instead of adding to it', () => {
    const cache = createFileStateCache({ maxBytes: 10 });
    cache.set('/a', state('12345678'));
    cache.set('/a', state('1234567890'));
    expect(cache.byteSize).toBe(10);
    expect(cache.get('/a')?.content).toBe('1234567890');
  });

  it('does not keep a file larger than maxBytes and drops its stale entry', () => {
    const cache = createFileStateCache({ maxBytes: 5 });
    cache.set('/keep', state('ab'));
    cache.set('/big', state('abc'));
    expect(cache.byteSize).toBe(5);
    cache.set('/big', state('abcdef'));
    expect(cache.has('/big')).toBe(false);
    expect(cache.get('/keep')?.content).toBe('ab');
    expect(cache.byteSize).toBe(2);
  });

  it('stores a frozen copy, so neither the caller nor a reader can change an entry in place', () => {
    const cache = createFileStateCache();
    const original = state('v1', 5);
    cache.set('/a', original);
    original.content = 'changed';
    expect(cache.get('/a')?.content).toBe('v1');
    const read = cache.get('/a');
    expect(() => {
      if (read) read.timestamp = 9;
    }).toThrow(TypeError);
  });

  it('rejects invalid limits with a clear error', () => {
    expect(() => createFileStateCache({ maxEntries: 0 })).toThrow(
      /maxEntries must be a positive integer/,
    );
    expect(() => createFileStateCache({ maxEntries: 1.5 })).toThrow(/maxEntries/);
    expect(() => createFileStateCache({ maxBytes: Number.NaN })).toThrow(/maxBytes/);
    expect(createFileStateCache({ maxBytes: Number.POSITIVE_INFINITY }).maxBytes).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('lets a caller read every entry while walking keys(), visiting each once', () => {
    const walkAndRead = (cache: LruFileStateCache): string[] => {
      const visited: string[] = [];
      for (const path of cache.keys()) {
        cache.get(path);
        visited.push(path);
        if (visited.length > 10) break; // without a snapshot this loop never ends
      }
      return visited;
    };
    const original = new LruFileStateCache();
    for (const path of ['/a', '/b', '/c']) original.set(path, state(path));
    // Sole owner: reads reorder the map in place.
    expect(walkAndRead(original)).toEqual(['/a', '/b', '/c']);
    // A clone: reads of shared entries are deferred.
    const clone = original.clone();
    expect(walkAndRead(clone)).toEqual(['/a', '/b', '/c']);
    expect([...clone.keys()]).toEqual(['/a', '/b', '/c']);
  });

  it('clear() empties the cache', () => {
    const cache = createFileStateCache();
    cache.set('/a', state('a'));
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.byteSize).toBe(0);
  });
});

describe('LruFileStateCache.clone', () => {
  it('starts with the same entries and limits', () => {
    const cache = createFileStateCache({ maxEntries: 7, maxBytes: 70 });
    cache.set('/a', state('a', 3));
    const copy = cache.clone();
    expect(copy.get('/a')).toEqual(state('a', 3));
    expect(copy.maxEntries).toBe(7);
    expect(copy.maxBytes).toBe(70);
    expect(copy.byteSize).toBe(1);
  });

  it('keeps writes, deletes and clears on either side from showing in the other', () => {
    const parent = createFileStateCache();
    parent.set('/shared', state('s'));
    const child = cloneFileStateCache(parent);

    child.set('/child-only', state('c'));
    child.set('/shared', state('child version'));
    expect(parent.has('/child-only')).toBe(false);
    expect(parent.get('/shared')?.content).toBe('s');

    parent.set('/parent-only', state('p'));
    expect(child.has('/parent-only')).toBe(false);

    parent.delete('/shared');
    expect(child.get('/shared')?.content).toBe('child version');

    child.clear();
    expect(parent.has('/parent-only')).toBe(true);
  });

  it('keeps clones of clones independent of each other and of the original', () => {
    const root = createFileStateCache();
    root.set('/a', state('root'));
    const first = root.clone();
    const second = first.clone();
    const third = root.clone();
    second.set('/a', state('second'));
    expect(root.get('/a')?.content).toBe('root');
    expect(first.get('/a')?.content).toBe('root');
    expect(third.get('/a')?.content).toBe('root');
    first.delete('/a');
    expect(root.has('/a')).toBe(true);
    expect(third.has('/a')).toBe(true);
    expect(second.get('/a')?.content).toBe('second');
  });

  it("keeps the clone's reads from changing the original's eviction order", () => {
    const parent = createFileStateCache({ maxEntries: 2 });
    parent.set('/old', state('o')).set('/new', state('n'));
    const child = parent.clone();
    child.get('/old');
    parent.set('/third', state('t'));
    expect(parent.has('/old')).toBe(false);
    child.set('/third', state('t'));
    expect(child.has('/old')).toBe(true);
    expect(child.has('/new')).toBe(false);
  });

  it('keeps exact recency through many reads while the entries are shared', () => {
    const parent = createFileStateCache({ maxEntries: 4 });
    for (const key of ['/a', '/b', '/c', '/d']) parent.set(key, state(key));
    const child = parent.clone();
    const reads = ['/a', '/c', '/b'];
    for (let round = 0; round < 100; round++) for (const key of reads) parent.get(key);
    const grandchild = parent.clone();
    parent.get('/d');
    expect([...parent.keys()]).toEqual(['/a', '/c', '/b', '/d']);
    expect([...grandchild.keys()]).toEqual(['/d', '/a', '/c', '/b']);
    expect([...child.keys()]).toEqual(['/a', '/b', '/c', '/d']);
    grandchild.set('/e', state('e'));
    expect([...grandchild.keys()]).toEqual(['/a', '/c', '/b', '/e']);
  });

  it('keeps the order of older reads when one file is read over and over', () => {
    const parent = createFileStateCache({ maxEntries: 4 });
    for (const key of ['/a', '/b', '/c', '/d']) parent.set(key, state(key));
    const child = parent.clone();
    for (const key of ['/b', '/c', '/d']) child.get(key);
    for (let round = 0; round < 200; round++) child.get('/a');
    expect([...child.keys()]).toEqual(['/b', '/c', '/d', '/a']);
    child.set('/e', state('e'));
    expect([...child.keys()]).toEqual(['/c', '/d', '/a', '/e']);
  });

  it('makes each clone respect the limits on its own', () => {
    const parent = createFileStateCache({ maxEntries: 3, maxBytes: 30 });
    parent.set('/a', state('a')).set('/b', state('b'));
    const child = parent.clone();
    for (let index = 0; index < 10; index++) child.set(`/c${index}`, state('0123456789'));
    expect(child.size).toBe(3);
    expect(child.byteSize).toBeLessThanOrEqual(30);
    expect(parent.size).toBe(2);
  });
});

// Reference model: an array in recency order, copied in full on clone.
type ModelCache = { order: string[]; values: Map<string, FileState> };

function modelSet(
  model: ModelCache,
  key: string,
  value: FileState,
  limits: { maxEntries: number; maxBytes: number },
): void {
  model.order = model.order.filter((existing) => existing !== key);
  model.values.delete(key);
  if (Buffer.byteLength(value.content) > limits.maxBytes) return;
  model.order.push(key);
  model.values.set(key, value);
  const bytes = (): number =>
    model.order.reduce(
      (sum, existing) => sum + Buffer.byteLength(model.values.get(existing)?.content ?? ''),
      0,
    );
  while (model.order.length > limits.maxEntries || bytes() > limits.maxBytes) {
    const oldest = model.order.shift();
    if (oldest !== undefined) model.values.delete(oldest);
  }
}

describe('LruFileStateCache against a deep-copy reference model', () => {
  const operation = fc.oneof(
    fc.record({
      kind: fc.constant('set' as const),
      target: fc.nat(),
      key: fc.constantFrom('/a', '/b', '/c', '/d', '/e'),
      // Any code point: multi-byte text must be counted in UTF-8 bytes, not characters.
      content: fc.string({ unit: 'binary', maxLength: 6 }),
    }),
    fc.record({
      kind: fc.constant('get' as const),
      target: fc.nat(),
      key: fc.constantFrom('/a', '/b', '/c', '/d', '/e'),
    }),
    fc.record({
      kind: fc.constant('delete' as const),
      target: fc.nat(),
      key: fc.constantFrom('/a', '/b', '/c', '/d', '/e'),
    }),
    fc.record({ kind: fc.constant('clone' as const), target: fc.nat() }),
    fc.record({ kind: fc.constant('clear' as const), target: fc.nat() }),
  );

  it('behaves like independent deep copies under any sequence of operations', () => {
    fc.assert(
      fc.property(
        fc.array(operation, { minLength: 10, maxLength: 80, size: 'max' }),
        (operations) => {
          const limits = { maxEntries: 3, maxBytes: 12 };
          const caches: LruFileStateCache[] = [new LruFileStateCache(limits)];
          const models: ModelCache[] = [{ order: [], values: new Map() }];
          for (const [step, op] of operations.entries()) {
            const index = op.target % caches.length;
            const cache = caches[index];
            const model = models[index];
            if (cache === undefined || model === undefined) throw new Error('unreachable');
            switch (op.kind) {
              case 'set': {
                const value = state(op.content, step);
                cache.set(op.key, value);
                modelSet(model, op.key, value, limits);
                break;
              }
              case 'get': {
                const found = cache.get(op.key);
                expect(found).toEqual(model.values.get(op.key));
                if (model.values.has(op.key)) {
                  model.order = [...model.order.filter((key) => key !== op.key), op.key];
                }
                break;
              }
              case 'delete':
                expect(cache.delete(op.key)).toBe(model.values.delete(op.key));
                model.order = model.order.filter((key) => key !== op.key);
                break;
              case 'clone':
                caches.push(cache.clone());
                models.push({ order: [...model.order], values: new Map(model.values) });
                break;
              case 'clear':
                cache.clear();
                model.order = [];
                model.values.clear();
                break;
            }
            for (const [position, each] of caches.entries()) {
              expect([...each.keys()]).toEqual(models[position]?.order);
              expect(each.size).toBe(models[position]?.order.length);
              const modelBytes = [...(models[position]?.values.values() ?? [])].reduce(
                (sum, value) => sum + Buffer.byteLength(value.content, 'utf8'),
                0,
              );
              expect(each.byteSize).toBe(modelBytes);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
