/** How {@link parseSimpleYaml} treats a top-level key given twice. */
export type DuplicateKeys = 'error' | 'last-wins';

/** What {@link parseSimpleYaml} made of a frontmatter text. */
export type SimpleYamlResult =
  | {
      /** The text is a top-level mapping in the simple subset; this is what YAML reads. */
      kind: 'mapping';
      /** The mapping, as a YAML parser's plain JavaScript value would have it. */
      record: Record<string, unknown>;
      /** 1-based line of each top-level key (the last one when a key repeats). */
      keyLines: Map<string, number>;
    }
  | {
      /** The text is certainly not valid YAML, for a reason the subset recognizes. */
      kind: 'error';
      /** 1-based line of the problem. */
      line: number;
      /** Which problem. */
      code: 'duplicate-key' | 'mapping-in-plain-value';
      /** Top-level key whose line has the problem. */
      key: string;
    }
  | {
      /** The text uses YAML outside the subset; a full YAML parser must read it. */
      kind: 'unsupported';
    };

// The subset: a top-level block mapping of simple keys whose values are single-line plain,
// quoted or flow-list scalars, plain values folded over indented lines, literal and folded
// block scalars, or block lists of single-line scalars. That is what nearly every agent file
// holds; anything else (anchors, tags, nested mappings, multi-line quotes, tabs) is left to
// the full parser. Every answer other than 'unsupported' is what the `yaml` package reads
// (a differential property test holds the two together).

const UNSUPPORTED: SimpleYamlResult = { kind: 'unsupported' };
const SIMPLE_KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?: +|$)/;
// Characters that cannot start a plain scalar (YAML's c-indicator), except `-`, `?` and `:`,
// which the subset does not start plain scalars with either.
const INDICATOR_START = /^[-?:,[\]{}#&*!|>'"%@`]/;
const NUMBER_LIKE_START = /^[-+.0-9]/;
const DECIMAL_INTEGER = /^[-+]?[0-9]{1,15}$/;

class Unsupported extends Error {}

function unsupported(): never {
  throw new Unsupported();
}

type Lines = { texts: string[]; at: number };

function splitLines(text: string): string[] | undefined {
  const lines = text.split('\n');
  if (!text.includes('\r')) return lines;
  // CRLF is read as LF; a lone CR (another line break for YAML) is not in the subset.
  const stripped: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const isLast = index === lines.length - 1;
    const body = !isLast && line.endsWith('\r') ? line.slice(0, -1) : line;
    if (body.includes('\r')) return undefined;
    stripped.push(body);
  }
  return stripped;
}

function indentOf(line: string): number {
  let index = 0;
  while (line.charCodeAt(index) === 32) index += 1;
  return index;
}

function isBlank(line: string): boolean {
  return indentOf(line) === line.length;
}

function isCommentLine(line: string): boolean {
  return line.charAt(indentOf(line)) === '#';
}

/** Resolves a plain scalar by YAML 1.2's core schema, or gives up on number-like text. */
function resolvePlain(text: string): unknown {
  switch (text) {
    case '':
    case '~':
    case 'null':
    case 'Null':
    case 'NULL':
      return null;
    case 'true':
    case 'True':
    case 'TRUE':
      return true;
    case 'false':
    case 'False':
    case 'FALSE':
      return false;
    default:
      break;
  }
  if (NUMBER_LIKE_START.test(text)) {
    if (DECIMAL_INTEGER.test(text)) return Number(text);
    return unsupported(); // floats, hex, octal, .inf and text such as -foo: left to YAML
  }
  return text;
}

// YAML's white space is the space and the tab only: a no-break or ideographic space at either
// end of a plain value is part of it (String#trim would drop it).
function trimYamlSpaceEnd(text: string): string {
  return text.replace(/[ \t]+$/, '');
}

function trimYamlSpace(text: string): string {
  return trimYamlSpaceEnd(text).replace(/^[ \t]+/, '');
}

// The part of a plain value before a ` #` comment, trimmed; undefined when it ends a mapping
// key (`a: b`, `a:`), which YAML refuses on the line of another key.
function plainValueText(text: string): string | undefined {
  const comment = text.search(/ #/);
  const value = trimYamlSpaceEnd(comment === -1 ? text : text.slice(0, comment));
  if (/: |:$/.test(value)) return undefined;
  return value;
}

const DOUBLE_QUOTE_ESCAPES: Readonly<Record<string, string>> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
};
const HEX_ESCAPE_LENGTHS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

function readHexEscape(text: string, at: number, length: number): string {
  const digits = text.slice(at, at + length);
  if (!new RegExp(`^[0-9A-Fa-f]{${length}}$`).test(digits)) return unsupported();
  const code = Number.parseInt(digits, 16);
  if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return unsupported();
  return String.fromCodePoint(code);
}

// A double-quoted scalar that starts at `start` and closes on the same line: its value and
// the index after the closing quote. Plain runs are sliced whole; only escapes are decoded.
function readDoubleQuoted(text: string, start: number): { value: string; end: number } {
  let value = '';
  let index = start + 1;
  for (;;) {
    const quote = text.indexOf('"', index);
    if (quote === -1) return unsupported(); // continues on the next line
    const escape = text.indexOf('\\', index);
    if (escape === -1 || escape > quote) {
      return { value: value + text.slice(index, quote), end: quote + 1 };
    }
    value += text.slice(index, escape);
    const next = text.charAt(escape + 1);
    const simple = DOUBLE_QUOTE_ESCAPES[next];
    const hexLength = HEX_ESCAPE_LENGTHS[next];
    if (simple !== undefined) {
      value += simple;
      index = escape + 2;
    } else if (hexLength !== undefined) {
      value += readHexEscape(text, escape + 2, hexLength);
      index = escape + 2 + hexLength;
    } else {
      return unsupported(); // an invalid escape, or a line break escaped at the line's end
    }
  }
}

function readSingleQuoted(text: string, start: number): { value: string; end: number } {
  let value = '';
  for (let index = start + 1; index < text.length; index++) {
    const character = text.charAt(index);
    if (character !== "'") {
      value += character;
    } else if (text.charAt(index + 1) === "'") {
      value += "'";
      index += 1;
    } else {
      return { value, end: index + 1 };
    }
  }
  return unsupported();
}

function readQuoted(text: string, start: number): { value: string; end: number } {
  return text.charAt(start) === '"' ? readDoubleQuoted(text, start) : readSingleQuoted(text, start);
}

// After a complete scalar on a line only spaces and a ` #` comment may follow.
function expectLineEnd(text: string, from: number): void {
  const rest = text.slice(from);
  if (trimYamlSpace(rest) === '') return;
  if (/^ +#/.test(rest)) return;
  unsupported();
}

function readFlowItem(text: string, start: number): { value: unknown; end: number } {
  const first = text.charAt(start);
  if (first === '"' || first === "'") {
    const quoted = readQuoted(text, start);
    let end = quoted.end;
    while (text.charAt(end) === ' ') end += 1;
    return { value: quoted.value, end };
  }
  let end = start;
  while (end < text.length && !',[]{}#'.includes(text.charAt(end))) {
    if (text.charAt(end) === ':') return unsupported();
    end += 1;
  }
  if (text.charAt(end) === '#') return unsupported();
  const raw = trimYamlSpace(text.slice(start, end));
  if (raw === '' || INDICATOR_START.test(raw)) return unsupported();
  return { value: resolvePlain(raw), end };
}

// A flow list `[a, "b", 'c']` that closes on its line; nested collections are not in the subset.
function readFlowList(text: string, start: number): unknown[] {
  const items: unknown[] = [];
  let index = start + 1;
  for (;;) {
    while (text.charAt(index) === ' ') index += 1;
    if (text.charAt(index) === ']') break;
    const item = readFlowItem(text, index);
    items.push(item.value);
    index = item.end;
    const separator = text.charAt(index);
    if (separator === ',') index += 1;
    else if (separator !== ']') return unsupported();
  }
  expectLineEnd(text, index + 1);
  return items;
}

// One scalar written on one line: quoted, a flow list, or plain.
function readInlineScalar(text: string): unknown {
  const first = text.charAt(0);
  if (first === '"' || first === "'") {
    const quoted = readQuoted(text, 0);
    expectLineEnd(text, quoted.end);
    return quoted.value;
  }
  if (first === '[') return readFlowList(text, 0);
  if (INDICATOR_START.test(text)) return unsupported();
  const value = plainValueText(text);
  if (value === undefined) return unsupported();
  return resolvePlain(value);
}

function isBlockScalarHeader(text: string): boolean {
  return /^[|>][-+]?(?: +#.*)?$/.test(text.trimEnd());
}

// The content lines of a block scalar, each with its indentation removed, and where they end.
function takeBlockLines(lines: Lines): { content: string[]; trailingBlank: number } {
  const texts = lines.texts;
  let indent = 0;
  const raw: string[] = [];
  while (lines.at < texts.length) {
    const line = texts[lines.at] ?? '';
    if (isBlank(line)) {
      if (indent > 0 && line.length > indent) return unsupported(); // spaces kept as content
      if (indent === 0 && line.length > 0) return unsupported(); // may set the indentation
      raw.push('');
      lines.at += 1;
      continue;
    }
    const lineIndent = indentOf(line);
    if (indent === 0) {
      if (lineIndent === 0) break;
      indent = lineIndent;
    }
    if (lineIndent < indent) {
      if (lineIndent === 0) break;
      return unsupported();
    }
    if (line.charAt(indent) === '\t' || line.slice(0, indent).includes('\t')) return unsupported();
    raw.push(line.slice(indent));
    lines.at += 1;
  }
  let trailingBlank = 0;
  while (raw.length > 0 && raw[raw.length - 1] === '') {
    raw.pop();
    trailingBlank += 1;
  }
  // A text that ends with a line break splits into a last '' that is no line of its own.
  if (trailingBlank > 0 && lines.at === texts.length && texts[texts.length - 1] === '') {
    trailingBlank -= 1;
  }
  return { content: raw, trailingBlank };
}

function foldBlockLines(content: readonly string[]): string {
  let folded = '';
  let pendingBreaks = 0;
  let started = false;
  for (const line of content) {
    if (line === '') {
      pendingBreaks += 1;
      continue;
    }
    if (line.startsWith(' ') || line.startsWith('\t')) return unsupported(); // more-indented
    if (!started) folded += '\n'.repeat(pendingBreaks);
    else folded += pendingBreaks === 0 ? ' ' : '\n'.repeat(pendingBreaks);
    folded += line;
    pendingBreaks = 0;
    started = true;
  }
  return folded;
}

function readBlockScalar(header: string, lines: Lines): string {
  const literal = header.startsWith('|');
  const chomping = header.charAt(1);
  const { content, trailingBlank } = takeBlockLines(lines);
  if (content.length === 0) {
    if (chomping === '+' && trailingBlank > 0) return unsupported();
    return '';
  }
  const body = literal ? content.join('\n') : foldBlockLines(content);
  if (chomping === '-') return body;
  if (chomping === '+') return `${body}\n${'\n'.repeat(trailingBlank)}`;
  return `${body}\n`;
}

// Indented lines that continue a plain value, folded as YAML folds plain scalars.
function readPlainContinuation(first: string, lines: Lines): unknown {
  const texts = lines.texts;
  const parts = [first];
  let lookahead = lines.at;
  let blankRun = 0;
  while (lookahead < texts.length) {
    const line = texts[lookahead] ?? '';
    if (isBlank(line)) {
      blankRun += 1;
      lookahead += 1;
      continue;
    }
    if (indentOf(line) === 0) break;
    const trimmed = trimYamlSpace(line);
    if (INDICATOR_START.test(trimmed) || /: |:$| #|\t/.test(trimmed)) return unsupported();
    parts.push(...Array<string>(blankRun).fill(''), trimmed);
    blankRun = 0;
    lookahead += 1;
    lines.at = lookahead;
  }
  if (parts.length === 1) return resolvePlain(first);
  let folded = '';
  let pendingBreaks = 0;
  parts.forEach((part, index) => {
    if (part === '') {
      pendingBreaks += 1;
      return;
    }
    if (index > 0) folded += pendingBreaks === 0 ? ' ' : '\n'.repeat(pendingBreaks);
    folded += part;
    pendingBreaks = 0;
  });
  return folded;
}

function readSequenceItem(text: string): unknown {
  if (text === '') return null;
  if (INDICATOR_START.test(text) && !/^["'[]/.test(text)) return unsupported();
  if (/^[^"'[].*(?:: |:$)/.test(text)) return unsupported(); // a mapping inside the list
  return readInlineScalar(text);
}

// A block list under a key: `- item` lines at one indentation, possibly column 0.
function readBlockSequence(lines: Lines): unknown[] | undefined {
  const texts = lines.texts;
  let indent: number | undefined;
  const items: unknown[] = [];
  while (lines.at < texts.length) {
    const line = texts[lines.at] ?? '';
    if (isBlank(line) || isCommentLine(line)) {
      lines.at += 1;
      continue;
    }
    const lineIndent = indentOf(line);
    indent ??= lineIndent;
    if (lineIndent !== indent) {
      if (lineIndent < indent) break;
      return unsupported();
    }
    if (!/^- |^-$/.test(line.slice(indent))) {
      if (indent === 0 || items.length === 0) break;
      return unsupported();
    }
    const item = trimYamlSpace(line.slice(indent + 1));
    if (item.includes('\t')) return unsupported();
    items.push(readSequenceItem(item));
    lines.at += 1;
  }
  return items.length === 0 ? undefined : items;
}

// The value of a key whose line holds nothing after the colon: a list, or null.
function readValueBelow(lines: Lines): unknown {
  const texts = lines.texts;
  let lookahead = lines.at;
  while (lookahead < texts.length) {
    const line = texts[lookahead] ?? '';
    if (isBlank(line) || isCommentLine(line)) {
      lookahead += 1;
      continue;
    }
    if (line.slice(indentOf(line)).startsWith('- ') || trimYamlSpace(line) === '-') {
      return readBlockSequence(lines);
    }
    if (indentOf(line) > 0) return unsupported(); // a nested mapping or an indented scalar
    break;
  }
  return null;
}

function readValue(rest: string, lines: Lines): unknown {
  if (rest === '' || rest.startsWith('#')) return readValueBelow(lines);
  if (isBlockScalarHeader(rest)) return readBlockScalar(rest, lines);
  const first = rest.charAt(0);
  if (first === '"' || first === "'" || first === '[') return readInlineScalar(rest);
  if (INDICATOR_START.test(rest)) return unsupported();
  const value = plainValueText(rest);
  if (value === undefined) return unsupported();
  if (rest.includes(' #')) return resolvePlain(value);
  return readPlainContinuation(value, lines);
}

type Entry = { key: string; line: number; rest: string };

function readEntry(line: string, lineNumber: number): Entry {
  if (line.includes('\t')) return unsupported();
  const match = SIMPLE_KEY.exec(line);
  if (match === null) return unsupported();
  const key = match[1] ?? '';
  if (key === '__proto__') return unsupported();
  return { key, line: lineNumber, rest: trimYamlSpaceEnd(line.slice(match[0].length)) };
}

function parseLines(texts: string[], duplicateKeys: DuplicateKeys): SimpleYamlResult {
  const record: Record<string, unknown> = {};
  const keyLines = new Map<string, number>();
  const lines: Lines = { texts, at: 0 };
  while (lines.at < texts.length) {
    const line = texts[lines.at] ?? '';
    if (isBlank(line) || (isCommentLine(line) && !line.includes('\t'))) {
      lines.at += 1;
      continue;
    }
    if (/^(?:---|\.\.\.|%)/.test(line)) return unsupported();
    const entry = readEntry(line, lines.at + 1);
    lines.at += 1;
    if (
      entry.rest !== '' &&
      !/^["'[|>#]/.test(entry.rest) &&
      !INDICATOR_START.test(entry.rest) &&
      plainValueText(entry.rest) === undefined
    ) {
      return { kind: 'error', line: entry.line, code: 'mapping-in-plain-value', key: entry.key };
    }
    if (keyLines.has(entry.key) && duplicateKeys === 'error') {
      return { kind: 'error', line: entry.line, code: 'duplicate-key', key: entry.key };
    }
    record[entry.key] = readValue(entry.rest, lines);
    keyLines.set(entry.key, entry.line);
  }
  return { kind: 'mapping', record, keyLines };
}

/**
 * Reads frontmatter written in the simple YAML that nearly all agent files use, much faster
 * than a full YAML parser, and gives up (`unsupported`) on anything outside that subset.
 * Where it answers, the answer is the one a YAML 1.2 parser with the core schema gives.
 */
export function parseSimpleYaml(text: string, duplicateKeys: DuplicateKeys): SimpleYamlResult {
  const lines = splitLines(text);
  if (lines === undefined) return UNSUPPORTED;
  try {
    return parseLines(lines, duplicateKeys);
  } catch (error) {
    if (error instanceof Unsupported) return UNSUPPORTED;
    throw error;
  }
}
