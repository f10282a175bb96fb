type Redact = (text: string) => string;

// Deeper than this a value cannot be checked without risking the stack: it is left out.
const MAX_DEPTH = 64;

function redactArray(array: readonly unknown[], redact: Redact, walking: object[]): unknown {
  let copy: unknown[] | undefined;
  for (let index = 0; index < array.length; index++) {
    const entry = array[index];
    const redacted = walkValue(entry, redact, walking);
    if (redacted === entry) continue;
    copy ??= array.slice();
    copy[index] = redacted;
  }
  return copy ?? array;
}

function redactObject(object: Record<string, unknown>, redact: Redact, walking: object[]): unknown {
  const keys = Object.keys(object);
  // Built only once something changed; Object.fromEntries keeps a `__proto__` key a key.
  let copy: [string, unknown][] | undefined;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    const entry = object[key];
    const redactedKey = redact(key);
    const redacted = walkValue(entry, redact, walking);
    if (copy === undefined && (redactedKey !== key || redacted !== entry))
      copy = keys.slice(0, index).map((earlier) => [earlier, object[earlier]]);
    copy?.push([redactedKey, redacted]);
  }
  return copy ? Object.fromEntries(copy) : object;
}

/** An Error whose message holds a secret, as a new Error of the same name without it. */
function redactError(error: Error, redact: Redact): Error {
  const message = redact(error.message);
  if (message === error.message) return error;
  const copy = new Error(message);
  copy.name = error.name;
  return copy;
}

function walkValue(item: unknown, redact: Redact, walking: object[]): unknown {
  if (typeof item === 'string') return redact(item);
  if (typeof item !== 'object' || item === null || walking.includes(item)) return item;
  if (item instanceof Error) return redactError(item, redact);
  if (walking.length >= MAX_DEPTH) return '[left out]';
  const isArray = Array.isArray(item);
  if (!isArray) {
    const prototype: unknown = Object.getPrototypeOf(item);
    if (prototype !== Object.prototype && prototype !== null) return item;
  }
  walking.push(item);
  try {
    return isArray
      ? redactArray(item as unknown[], redact, walking)
      : redactObject(item as Record<string, unknown>, redact, walking);
  } finally {
    walking.pop();
  }
}

/**
 * `value` with `redact` applied to every string in it (object keys too), copying only the
 * arrays and plain objects on the way to a string that changed: when nothing changes, `value`
 * itself is returned, and it is never modified. An Error whose message changes is replaced by
 * a plain Error of the same name; a value nested more than 64 levels deep becomes
 * `'[left out]'` (it cannot be checked); anything else (a class instance, a Date, a function)
 * and a value met again inside itself (a cycle) is kept as it is.
 */
export function redactDeep<T>(value: T, redact: (text: string) => string): T {
  return walkValue(value, redact, []) as T;
}
