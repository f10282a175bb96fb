import { createHash } from 'node:crypto';

/** Number of hex digits kept from each sha256 digest (64 bits: ample to tell parts apart). */
const HASH_LENGTH = 16;

function canonicalValue(value: unknown): unknown {
  if (
    value !== null &&
    typeof value === 'object' &&
    'toJSON' in value &&
    typeof value.toJSON === 'function'
  ) {
    return canonicalValue((value as { toJSON: () => unknown }).toJSON());
  }
  if (Array.isArray(value)) {
    return value.map((item) => {
      const canonical = canonicalValue(item);
      return canonical === undefined ? null : canonical;
    });
  }
  if (value !== null && typeof value === 'object') {
    // No prototype: a "__proto__" key (legal in JSON) must stay an ordinary property.
    const sorted: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value).sort()) {
      const canonical = canonicalValue((value as Record<string, unknown>)[key]);
      if (canonical !== undefined) sorted[key] = canonical;
    }
    return sorted;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  return value;
}

/**
 * Serializes a value as JSON with object keys in sorted order, so that two values that
 * send the same JSON serialize the same way whatever order their keys were built in.
 * Follows `JSON.stringify` otherwise (undefined dropped, `toJSON` honoured).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalValue(value)) ?? 'null';
}

/**
 * Serializes a value as JSON keeping the key order it was built in (plain
 * `JSON.stringify`), for payloads whose text reaches the prompt as written.
 */
export function orderedJson(value: unknown): string {
  // Like canonicalJson, a bigint is written as its digits instead of throwing.
  const replacer = (_key: string, item: unknown): unknown =>
    typeof item === 'bigint' ? item.toString() : item;
  return JSON.stringify(value, replacer) ?? 'null';
}

/** Returns a short sha256 hex digest of the given parts, each length-prefixed. */
export function hashParts(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:${part}|`);
  return hash.digest('hex').slice(0, HASH_LENGTH);
}
