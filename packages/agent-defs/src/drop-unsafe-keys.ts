/** Keys that change an object's prototype or constructor when code merges a value into another object. */
export const UNSAFE_OBJECT_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** A copy of a value without unsafe keys, and how many keys were left out. */
export type SafeValue<T> = { value: T; dropped: number };

/**
 * Copies plain objects and arrays at every depth, leaving out the {@link UNSAFE_OBJECT_KEYS},
 * so a definition's mappings (hooks, MCP servers) can be merged by later code without
 * polluting prototypes. Other values are returned as they are.
 */
export function dropUnsafeKeys<T>(value: T): SafeValue<T> {
  let dropped = 0;
  const copy = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(copy);
    if (typeof item !== 'object' || item === null) return item;
    const result: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(item)) {
      if (UNSAFE_OBJECT_KEYS.has(key)) {
        dropped += 1;
        continue;
      }
      result[key] = copy(inner);
    }
    return result;
  };
  const safe = copy(value) as T;
  return { value: safe, dropped };
}
