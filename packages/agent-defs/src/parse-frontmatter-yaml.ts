import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';

/** Most YAML aliases a frontmatter block may expand; more is treated as an alias bomb. */
export const MAX_YAML_ALIAS_COUNT = 100;

/** Frontmatter read into a mapping, or the reason it could not be. */
export type FrontmatterYamlResult =
  | {
      ok: true;
      /** The top-level mapping. */
      record: Record<string, unknown>;
      /** 1-based line (within the YAML text) of each top-level key. */
      keyLines: Map<string, number>;
      /** Set when the YAML only parsed after quoting plain values; says where the original broke. */
      repairedAt?: { line: number; message: string };
    }
  | {
      ok: false;
      /** 1-based line within the YAML text, when known. */
      line?: number;
      /** What is wrong. */
      reason: string;
    };

type Attempt =
  | { ok: true; value: unknown; keyLines: Map<string, number> }
  | { ok: false; line?: number; message: string };

function attempt(text: string): Attempt {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const [error] = document.errors;
  if (error !== undefined) {
    const position = lineCounter.linePos(error.pos[0]);
    return {
      ok: false,
      line: position.line,
      message: error.message.split('\n')[0] ?? error.message,
    };
  }
  const keyLines = new Map<string, number>();
  if (isMap(document.contents)) {
    for (const pair of document.contents.items) {
      if (isScalar(pair.key) && pair.key.range !== undefined && pair.key.range !== null) {
        keyLines.set(String(pair.key.value), lineCounter.linePos(pair.key.range[0]).line);
      }
    }
  }
  try {
    return { ok: true, value: document.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT }), keyLines };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      message: /alias/i.test(message)
        ? `YAML aliases expand too much (more than ${MAX_YAML_ALIAS_COUNT}; a possible alias bomb)`
        : message,
    };
  }
}

// Real agent files often hold unquoted descriptions such as `description: Use when: ...`.
// A top-level plain value containing ': ' (outside a trailing comment) or ending in ':' is
// never valid YAML, so quoting such values only changes documents that would fail anyway.
const TOP_LEVEL_PLAIN_VALUE = /^([A-Za-z_][\w-]*)([ \t]*:[ \t]+)(.*)$/;
const STARTS_STRUCTURED = /^["'[{|>&*!%@`#]/;

type QuotedText = { text: string; line: number; key: string };

function quoteProblematicValues(text: string): QuotedText | undefined {
  let first: { line: number; key: string } | undefined;
  const lines = text.split('\n').map((line, index) => {
    const match = TOP_LEVEL_PLAIN_VALUE.exec(line);
    if (match === null) return line;
    const [, key = '', separator = '', value = ''] = match;
    const trimmed = value.trim();
    if (trimmed.length === 0 || STARTS_STRUCTURED.test(trimmed)) return line;
    const beforeComment = trimmed.split(/\s#/)[0] ?? '';
    if (!/: |:$/.test(beforeComment)) return line;
    first ??= { line: index + 1, key };
    return `${key}${separator}${JSON.stringify(trimmed)}`;
  });
  return first === undefined ? undefined : { text: lines.join('\n'), ...first };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? 'plain text' : typeof value;
}

/** Parses frontmatter YAML into a mapping (aliases bounded), quoting top-level plain values that hold ': '. */
export function parseFrontmatterYaml(text: string): FrontmatterYamlResult {
  // Quote first rather than after a failure: a failed parse costs several times a good one.
  const quoted = quoteProblematicValues(text);
  const repaired = quoted === undefined ? undefined : attempt(quoted.text);
  let result: Attempt;
  let repairedAt: { line: number; message: string } | undefined;
  if (quoted !== undefined && repaired?.ok === true && isRecord(repaired.value)) {
    result = repaired;
    repairedAt = {
      line: quoted.line,
      message: `the unquoted value of \`${quoted.key}\` contains ': '`,
    };
  } else {
    result = attempt(text);
  }
  if (!result.ok) {
    return {
      ok: false,
      reason: result.message,
      ...(result.line === undefined ? {} : { line: result.line }),
    };
  }
  if (result.value === null || result.value === undefined)
    return { ok: true, record: {}, keyLines: result.keyLines };
  if (!isRecord(result.value)) {
    return {
      ok: false,
      line: 1,
      reason: `frontmatter is ${describe(result.value)}, not a mapping of keys to values`,
    };
  }
  return {
    ok: true,
    record: result.value,
    keyLines: result.keyLines,
    ...(repairedAt === undefined ? {} : { repairedAt }),
  };
}
