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
      repairedAt?: { line: number; message: string; advice: string };
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

// Real agent files often hold unquoted values that strict YAML rejects:
//   - `description: Use when: ...` (a ': ' inside a plain value),
//   - `description: **Bold**: ...` (a value that starts with a YAML indicator),
//   - a plain value continued on indented lines that contain 'Context: ...' or 'user: ...',
//   - a plain value wrapped onto a line that starts at column 0 (a formatter's line wrap),
//   - a quoted value whose later lines start at column 0.
// None of these is ever valid YAML: a plain scalar may not contain ': ' or end a line with
// ':', a bare line at column 0 inside a mapping is a key without a value, and the lines of a
// quoted scalar must be indented under their key. So rewriting
// such a value as one quoted string only changes documents that would fail anyway.
const TOP_LEVEL_PLAIN_VALUE = /^([A-Za-z_][\w-]*)([ \t]*:[ \t]+)(.*)$/;
// Quoted strings, flow collections, block scalars, anchors, tags and comments are left alone.
const STARTS_STRUCTURED = /^["'[{|>&!#]/;
// `%`, `@` and a backtick can never start a plain value, and `*` starts one only as a lone
// alias; real files start descriptions with Markdown such as `**Bold**:` or `` `code` ``.
const STARTS_WITH_INDICATOR = /^(?:[%@`]|\*(?![^\s,[\]{}]+\s*(?:#.*)?$))/;
// A line at column 0 that strict YAML would read as a key, a list item, a comment or a marker.
const NOT_A_CONTINUATION = /^(?:[^\s#][^:]*:(?:\s|$)|[-#]|\.\.\.|---)/;

type QuotedText = { text: string; line: number; problem: string; advice: string };

// Whether a line of a plain value holds ': ' or ends in ':' before any `#` comment.
function hasMappingIndicator(line: string): boolean {
  const beforeComment = line.split(/(?:^|\s)#/)[0] ?? '';
  return /: |:$/.test(beforeComment);
}

// Folds the lines of a plain scalar as YAML does: a single line break becomes a space, and
// each empty line becomes one newline.
function foldPlainLines(lines: readonly string[]): string {
  let folded = '';
  let emptyLines = 0;
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed.length === 0) {
      emptyLines += 1;
      continue;
    }
    if (folded.length > 0) folded += emptyLines > 0 ? '\n'.repeat(emptyLines) : ' ';
    folded += trimmed;
    emptyLines = 0;
  }
  return folded;
}

// Index just past the closing quote of a quoted scalar that opens at `start` of `text`, or -1.
function closingQuoteEnd(text: string, start: number): number {
  const quote = text.charAt(start);
  for (let index = start + 1; index < text.length; index++) {
    const character = text.charAt(index);
    if (quote === '"' && character === '\\') {
      index += 1;
    } else if (character === quote) {
      if (quote === "'" && text.charAt(index + 1) === "'") index += 1;
      else return index + 1;
    }
  }
  return -1;
}

// A quoted value that runs on over lines starting at column 0, which YAML rejects (the lines
// of a quoted scalar must be indented under their key). Returns the number of lines it spans
// when that is the case; indenting those lines keeps the value as folded YAML would read it.
function unindentedQuotedSpan(lines: readonly string[], start: number, valueStart: number): number {
  const rest = [(lines[start] ?? '').slice(valueStart), ...lines.slice(start + 1)].join('\n');
  const end = closingQuoteEnd(rest, 0);
  if (end === -1) return 0;
  const spanned = rest.slice(0, end).split('\n').length;
  if (spanned < 2) return 0;
  const after = rest.slice(end).split('\n')[0] ?? '';
  if (!/^\s*(?:#.*)?$/.test(after)) return 0;
  const continuation = lines.slice(start + 1, start + spanned);
  return continuation.some((line) => /^\S/.test(line)) ? spanned : 0;
}

function quoteProblematicValues(text: string): QuotedText | undefined {
  let first: Omit<QuotedText, 'text'> | undefined;
  const lines = text.split('\n');
  const output: string[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    index += 1;
    const match = TOP_LEVEL_PLAIN_VALUE.exec(line);
    const [, key = '', separator = '', value = ''] = match ?? [];
    const trimmed = value.trim();
    if (match !== null && /^["']/.test(trimmed)) {
      const spanned = unindentedQuotedSpan(lines, index - 1, key.length + separator.length);
      if (spanned > 0) {
        first ??= {
          line: index,
          problem: `the quoted value of \`${key}\` continues on lines that are not indented`,
          advice: 'indent every line of the value after the first',
        };
        output.push(line, ...lines.slice(index, index - 1 + spanned).map((part) => `  ${part}`));
        index += spanned - 1;
        continue;
      }
    }
    if (match === null || trimmed.length === 0 || STARTS_STRUCTURED.test(trimmed)) {
      output.push(line);
      continue;
    }
    // The value runs on over indented lines, blank lines and bare column-0 lines, up to the
    // next line that YAML would read as something else; trailing blank lines are not part of it.
    let end = index;
    let wrapsAtColumnZero = false;
    for (let next = index; next < lines.length; next++) {
      const candidate = lines[next] ?? '';
      if (candidate.trim().length === 0) continue;
      if (/^[ \t]/.test(candidate)) {
        end = next + 1;
      } else if (!NOT_A_CONTINUATION.test(candidate)) {
        wrapsAtColumnZero = true;
        end = next + 1;
      } else {
        break;
      }
    }
    const valueLines = [trimmed, ...lines.slice(index, end)];
    const continuation = valueLines.slice(1);
    const startsWithIndicator = STARTS_WITH_INDICATOR.test(trimmed);
    const broken =
      wrapsAtColumnZero ||
      startsWithIndicator ||
      hasMappingIndicator(trimmed) ||
      continuation.some((part) => hasMappingIndicator(part));
    if (!broken) {
      output.push(line);
      continue;
    }
    first ??= {
      line: index,
      advice: 'put such values in quotes',
      problem: `the unquoted value of \`${key}\` ${
        wrapsAtColumnZero
          ? 'continues on an unindented line'
          : startsWithIndicator
            ? `starts with \`${trimmed.charAt(0)}\`, which YAML reserves`
            : continuation.length === 0
              ? "contains ': '"
              : "continues over lines that contain ': '"
      }`,
    };
    // A single-line value is quoted as written; a longer one is folded first. Blank lines keep
    // the line numbers of the keys that follow.
    const quoted = continuation.length === 0 ? trimmed : foldPlainLines(valueLines);
    output.push(`${key}${separator}${JSON.stringify(quoted)}`, ...continuation.map(() => ''));
    index = end;
  }
  return first === undefined ? undefined : { text: output.join('\n'), ...first };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'string' ? 'plain text' : typeof value;
}

/** Parses frontmatter YAML into a mapping (aliases bounded), quoting top-level plain values that strict YAML would reject. */
export function parseFrontmatterYaml(text: string): FrontmatterYamlResult {
  // Quote first rather than after a failure: a failed parse costs several times a good one.
  const quoted = quoteProblematicValues(text);
  const repaired = quoted === undefined ? undefined : attempt(quoted.text);
  let result: Attempt;
  let repairedAt: { line: number; message: string; advice: string } | undefined;
  if (quoted !== undefined && repaired?.ok === true && isRecord(repaired.value)) {
    result = repaired;
    repairedAt = {
      line: quoted.line,
      message: quoted.problem,
      advice: quoted.advice,
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
