import { isMap, isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml';

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

// Offset of the first key that repeats a scalar key of the same mapping, or undefined. The
// parser's own check compares every key with every earlier one, which takes minutes on a
// 1 MiB frontmatter of distinct keys; a set per mapping keeps it linear.
function firstDuplicateKeyOffset(document: Document): number | undefined {
  let offset: number | undefined;
  visit(document, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        if (seen.has(pair.key.value)) {
          offset = pair.key.range?.[0] ?? 0;
          return visit.BREAK;
        }
        seen.add(pair.key.value);
      }
      return undefined;
    },
  });
  return offset;
}

function attempt(text: string): Attempt {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const [error] = document.errors;
  if (error !== undefined) {
    const position = lineCounter.linePos(error.pos[0]);
    return {
      ok: false,
      line: position.line,
      message: error.message.split('\n')[0] ?? error.message,
    };
  }
  const duplicate = firstDuplicateKeyOffset(document);
  if (duplicate !== undefined) {
    const position = lineCounter.linePos(duplicate);
    return {
      ok: false,
      line: position.line,
      message: `Map keys must be unique at line ${position.line}, column ${position.col}`,
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

// Index of the quote that closes a quoted scalar on `line`, searching from `from` as if
// already inside the quotes, or -1 when the line does not close it.
function closingQuoteIndex(line: string, quote: string, from: number): number {
  for (let index = from; index < line.length; index++) {
    const character = line.charAt(index);
    if (quote === '"' && character === '\\') {
      index += 1;
    } else if (character === quote) {
      if (quote === "'" && line.charAt(index + 1) === "'") index += 1;
      else return index;
    }
  }
  return -1;
}

// Answers, for a quoted value opening on some line, where it closes. Each answer is found in
// constant time from tables built once, so a frontmatter of thousands of quoted values (or
// of values that never close) is scanned in linear time rather than once per value.
type QuotedSpanFinder = (start: number, valueStart: number) => number;

function createQuotedSpanFinder(lines: readonly string[]): QuotedSpanFinder {
  // For each quote character: the first line at or after L that closes a value open at the
  // start of L, and the column of its closing quote (-1 when no line does).
  const tables = new Map<string, { closingLine: Int32Array; closingColumn: Int32Array }>();
  const tableFor = (quote: string): { closingLine: Int32Array; closingColumn: Int32Array } => {
    let table = tables.get(quote);
    if (table === undefined) {
      const closingLine = new Int32Array(lines.length + 1).fill(-1);
      const closingColumn = new Int32Array(lines.length + 1).fill(-1);
      for (let line = lines.length - 1; line >= 0; line--) {
        const column = closingQuoteIndex(lines[line] ?? '', quote, 0);
        if (column === -1) {
          closingLine[line] = closingLine[line + 1] ?? -1;
          closingColumn[line] = closingColumn[line + 1] ?? -1;
        } else {
          closingLine[line] = line;
          closingColumn[line] = column;
        }
      }
      table = { closingLine, closingColumn };
      tables.set(quote, table);
    }
    return table;
  };
  // Number of lines before L that start at column 0 with something other than blank space.
  let unindentedBefore: Int32Array | undefined;
  const unindentedBetween = (from: number, to: number): number => {
    if (unindentedBefore === undefined) {
      unindentedBefore = new Int32Array(lines.length + 1);
      lines.forEach((line, index) => {
        (unindentedBefore as Int32Array)[index + 1] =
          ((unindentedBefore as Int32Array)[index] ?? 0) + (/^\S/.test(line) ? 1 : 0);
      });
    }
    return (unindentedBefore[to] ?? 0) - (unindentedBefore[from] ?? 0);
  };

  // A quoted value that runs on over lines starting at column 0, which YAML rejects (the lines
  // of a quoted scalar must be indented under their key). Returns the number of lines it spans
  // when that is the case; indenting those lines keeps the value as folded YAML would read it.
  return (start, valueStart) => {
    const first = lines[start] ?? '';
    const quote = first.charAt(valueStart);
    if (closingQuoteIndex(first, quote, valueStart + 1) !== -1) return 0;
    const table = tableFor(quote);
    const closing = table.closingLine[start + 1] ?? -1;
    if (closing === -1) return 0;
    const column = table.closingColumn[start + 1] ?? -1;
    const after = (lines[closing] ?? '').slice(column + 1);
    if (!/^\s*(?:#.*)?$/.test(after)) return 0;
    return unindentedBetween(start + 1, closing + 1) > 0 ? closing - start + 1 : 0;
  };
}

function quoteProblematicValues(text: string): QuotedText | undefined {
  let first: Omit<QuotedText, 'text'> | undefined;
  const lines = text.split('\n');
  const quotedSpan = createQuotedSpanFinder(lines);
  const output: string[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] ?? '';
    index += 1;
    const match = TOP_LEVEL_PLAIN_VALUE.exec(line);
    const [, key = '', separator = '', value = ''] = match ?? [];
    const trimmed = value.trim();
    if (match !== null && /^["']/.test(trimmed)) {
      const spanned = quotedSpan(index - 1, key.length + separator.length);
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
