/** The text that replaces a secret in what tools return. */
export const REDACTED = '[REDACTED]';

/** Shorter values are not treated as secrets (a placeholder key like `sim` is none). */
export const MIN_SECRET_LENGTH = 8;

/**
 * Shortest piece of a secret redacted next to a cut: a tool that shortens its output (Bash's
 * head and tail, Read's and Grep's long lines, an MCP result's cap) can cut through a secret,
 * leaving its start before the cut mark or its end after it, which no whole match finds.
 */
export const MIN_CUT_FRAGMENT_LENGTH = 4;

// The marks Delegate's tools leave where they cut text: `[… N bytes of output cut from the
// middle …]`, `[… result cut: N more characters not shown]` (both opened by "[…"), and
// `… [line truncated, N more characters]`, `… [N more characters]` (opened by "… [").
const CUT_MARK = /\[… [^\]\n]{0,200}\]|… \[[^\]\n]{0,200}\]/g;

type Span = [start: number, end: number];

/** Where each secret occurs in `text`, overlapping and repeated occurrences included. */
function secretSpans(text: string, secrets: readonly string[]): Span[] {
  const spans: Span[] = [];
  for (const secret of secrets) {
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1))
      spans.push([at, at + secret.length]);
  }
  return spans;
}

/** The pieces of secrets a cut left on either side of its mark. */
function cutFragmentSpans(text: string, secrets: readonly string[]): Span[] {
  const spans: Span[] = [];
  for (const mark of text.matchAll(CUT_MARK)) {
    const start = mark.index;
    const end = start + mark[0].length;
    // The head-and-tail mark stands in its own paragraph.
    const before = text.endsWith('\n\n', start) ? start - 2 : start;
    const after = text.startsWith('\n\n', end) ? end + 2 : end;
    for (const secret of secrets) {
      for (
        let length = Math.min(secret.length - 1, before);
        length >= MIN_CUT_FRAGMENT_LENGTH;
        length--
      ) {
        if (text.startsWith(secret.slice(0, length), before - length)) {
          spans.push([before - length, before]);
          break;
        }
      }
      const room = text.length - after;
      for (
        let length = Math.min(secret.length - 1, room);
        length >= MIN_CUT_FRAGMENT_LENGTH;
        length--
      ) {
        if (text.startsWith(secret.slice(secret.length - length), after)) {
          spans.push([after, after + length]);
          break;
        }
      }
    }
  }
  return spans;
}

/** `text` with every span (merged where they overlap or touch) replaced by `[REDACTED]`. */
function replaceSpans(text: string, spans: Span[]): string {
  spans.sort((a, b) => a[0] - b[0]);
  const merged: Span[] = [];
  for (const [start, end] of spans) {
    const last = merged.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  let result = '';
  let position = 0;
  for (const [start, end] of merged) {
    result += text.slice(position, start) + REDACTED;
    position = end;
  }
  return result + text.slice(position);
}

/**
 * Returns a function that replaces every occurrence of each secret in a text by
 * `[REDACTED]`: overlapping secrets (one's end is another's start) are replaced as one span,
 * so no part of either shows, and a piece of a secret of at least
 * {@link MIN_CUT_FRAGMENT_LENGTH} characters on either side of a tool's cut mark is replaced
 * too. `undefined` when there is no secret to look for (under {@link MIN_SECRET_LENGTH}
 * characters a value is none).
 */
export function secretRedactor(
  secrets: readonly (string | null | undefined)[],
): ((text: string) => string) | undefined {
  const list = [...new Set(secrets)].filter(
    (secret): secret is string => typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH,
  );
  if (list.length === 0) return undefined;
  return (text) => {
    const spans = secretSpans(text, list);
    if (text.includes('…')) spans.push(...cutFragmentSpans(text, list));
    return spans.length === 0 ? text : replaceSpans(text, spans);
  };
}

/** The redactor of a session's tool results: its client's credentials and its `secrets`. */
export function sessionRedactor(runtime: {
  client: { apiKey?: string | null; authToken?: string | null };
  options: { secrets: readonly string[] };
}): ((text: string) => string) | undefined {
  return secretRedactor([
    runtime.client.apiKey,
    runtime.client.authToken,
    ...runtime.options.secrets,
  ]);
}

/** `{ redact }` for an options object, or nothing when the session has no secrets. */
export function redactOption(runtime: Parameters<typeof sessionRedactor>[0]): {
  redact?: (text: string) => string;
} {
  const redact = sessionRedactor(runtime);
  return redact ? { redact } : {};
}

// Deeper than this, a value is left out rather than walked (progress data is small and flat).
const MAX_REDACT_DEPTH = 20;

/**
 * `value` with `redact` applied to every string in it, at any depth, as a copy of plain data
 * (arrays, plain objects, strings, numbers, booleans, null). A cycle, a value nested deeper
 * than 20 levels, or anything that is not plain data (a function, a class instance other than
 * Error and Date) becomes a placeholder text, since what it holds cannot be checked.
 */
export function redactValue(value: unknown, redact: (text: string) => string): unknown {
  const seen = new WeakSet<object>();
  const walk = (item: unknown, depth: number): unknown => {
    if (typeof item === 'string') return redact(item);
    if (item === null || typeof item === 'number' || typeof item === 'boolean') return item;
    if (item === undefined) return undefined;
    if (typeof item !== 'object') return `[${typeof item}]`;
    if (depth >= MAX_REDACT_DEPTH || seen.has(item)) return '[left out]';
    if (item instanceof Date) return item.toISOString();
    if (item instanceof Error) return redact(`${item.name}: ${item.message}`);
    seen.add(item);
    try {
      if (Array.isArray(item)) return item.map((entry) => walk(entry, depth + 1));
      const prototype: unknown = Object.getPrototypeOf(item);
      if (prototype !== Object.prototype && prototype !== null) return '[left out]';
      const copy: Record<string, unknown> = {};
      for (const [key, entry] of Object.entries(item)) copy[redact(key)] = walk(entry, depth + 1);
      return copy;
    } finally {
      seen.delete(item);
    }
  };
  return walk(value, 0);
}
