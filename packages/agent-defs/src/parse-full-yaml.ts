import * as JsYaml from 'js-yaml';
import { type DuplicateKeys } from './parse-simple-yaml.js';

/** Most aliases (`*name`) a frontmatter may hold; more is refused as a possible alias bomb. */
export const MAX_YAML_ALIAS_COUNT = 100;

/** Most nodes that aliases may add when they are expanded; more is refused as an alias bomb. */
export const MAX_YAML_ALIAS_EXPANSION = 10_000;

/**
 * Most characters that the values aliases stand for may add up to, counted while the parser
 * reads: a mapping key that is a list is turned into text, so aliases of long text inside such
 * keys would otherwise make the parser itself build gigabytes before any check runs.
 */
export const MAX_YAML_ALIAS_CHARACTERS = 1_000_000;

/** Deepest nesting the YAML parser itself accepts (a second guard behind the pre-scan). */
const PARSER_MAX_DEPTH = 40;

/** Why a YAML text could not be read, in words that quote none of it. */
export type YamlFailure = {
  /** 1-based line of the problem, when known. */
  line?: number;
  /** A short code for the problem (`duplicate-key`, `alias-bomb`, `yaml`, …). */
  code: string;
  /** What is wrong, without quoting the text. */
  message: string;
};

/** What a YAML text holds, or why it could not be read. */
export type FullYamlResult =
  | {
      ok: true;
      /** The document's value (any YAML value; a mapping is checked for by the caller). */
      value: unknown;
      /** 1-based line of each top-level key, when the document is a mapping. */
      keyLines: Map<string, number>;
    }
  | { ok: false; failure: YamlFailure };

type JsYamlModule = typeof JsYaml;
type LoadOptions = JsYaml.LoadOptions & { maxDepth?: number };
type Loader = { module: JsYamlModule; schema: JsYaml.Schema };

class BinaryValue extends Error {}

/** Thrown from the parser's listener when aliases go over Delegate's budget. */
class AliasBudgetExceeded extends Error {
  constructor(readonly failure: YamlFailure) {
    super(failure.message);
  }
}

// The text length an expanded value adds (a list or mapping key becomes text this long);
// `sizes` remembers values already measured, so shared parts are measured once.
function expandedLength(
  value: unknown,
  sizes: WeakMap<object, number>,
  onPath: Set<object>,
): number {
  if (typeof value === 'string') return value.length;
  if (typeof value !== 'object' || value === null) return 1;
  const known = sizes.get(value);
  if (known !== undefined) return known;
  if (onPath.has(value)) return 1;
  onPath.add(value);
  let length = 1;
  for (const child of Object.values(value)) length += expandedLength(child, sizes, onPath);
  onPath.delete(value);
  sizes.set(value, length);
  return length;
}

type ListenerState = { kind: string | null; result: unknown };

/**
 * A js-yaml listener that counts aliases as the parser meets them (a node that closes with a
 * value but no kind of its own is an alias) and refuses the text once they are more than
 * {@link MAX_YAML_ALIAS_COUNT} or stand for more than {@link MAX_YAML_ALIAS_CHARACTERS}
 * characters. It does not depend on the pre-scan, which only reads the text line by line.
 */
function createAliasBudget(): (event: string, state: ListenerState) => void {
  const sizes = new WeakMap<object, number>();
  let aliases = 0;
  let characters = 0;
  return (event, state) => {
    if (event !== 'close' || state.kind !== null || state.result === null) return;
    aliases += 1;
    if (aliases > MAX_YAML_ALIAS_COUNT) {
      throw new AliasBudgetExceeded({
        code: 'alias-bomb',
        message: `the frontmatter holds more than ${MAX_YAML_ALIAS_COUNT} aliases (*name), a possible alias bomb; write the values out`,
      });
    }
    characters += expandedLength(state.result, sizes, new Set());
    if (characters > MAX_YAML_ALIAS_CHARACTERS) {
      throw new AliasBudgetExceeded({
        code: 'alias-bomb',
        message: `its aliases stand for more than ${MAX_YAML_ALIAS_CHARACTERS} characters of values (a possible alias bomb); write the values out`,
      });
    }
  };
}

let loader: Loader | undefined;

// Any tag YAML 1.2's core schema does not know (`!custom`, `!!set`, `!!timestamp`) is read as
// the untagged value would be, as other YAML readers do; `!!binary` is refused.
function createSchema(module: JsYamlModule): JsYaml.Schema {
  const kinds = ['scalar', 'sequence', 'mapping'] as const;
  const tolerated = ['!', 'tag:'].flatMap((prefix) =>
    kinds.map(
      (kind) =>
        new module.Type(prefix, {
          kind,
          multi: true,
          construct: (data: unknown, tag?: string) => {
            if (tag === 'tag:yaml.org,2002:binary') throw new BinaryValue();
            if (data !== null) return data;
            if (kind === 'sequence') return [];
            return kind === 'mapping' ? {} : '';
          },
        }),
    ),
  );
  return module.CORE_SCHEMA.extend(tolerated);
}

// A static import, so bundlers (the CLI's) see the dependency; the schema is still built on
// first use, since most frontmatter never needs the full parser.
function loadParser(): Loader {
  loader ??= { module: JsYaml, schema: createSchema(JsYaml) };
  return loader;
}

// Own words for the parser's reasons, so no diagnostic echoes the file's text.
const PARSER_MESSAGES: ReadonlyArray<[RegExp, string, string]> = [
  [/duplicated mapping key/, 'duplicate-key', 'a key is given twice in one mapping'],
  [
    /unknown escape sequence|expected hexadecimal/,
    'bad-escape',
    'a double-quoted value holds an escape sequence YAML does not know',
  ],
  [/tab characters/, 'tab-indent', 'a line is indented with a tab, which YAML does not allow'],
  [/within a (?:single|double) quoted scalar/, 'unclosed-quote', 'a quoted value is never closed'],
  [
    /within a flow collection|missed comma between flow/,
    'unclosed-bracket',
    'a [ ] or { } list is never closed, or misses a comma',
  ],
  [
    /bad indentation of a mapping entry/,
    'nested-key',
    "a line is not a valid `key: value` pair (a value holding ': ', text after a quoted value, or a wrong indentation)",
  ],
  [/bad indentation of a sequence entry/, 'bad-indent', 'a list item is indented inconsistently'],
  [
    /unidentified alias|alias node/,
    'bad-alias',
    'an alias (*name) refers to no anchor defined before it',
  ],
  [
    /multiline key|implicit mapping pair|incomplete explicit mapping pair|block mapping entry/,
    'not-a-key',
    'a line is neither a `key: value` pair nor part of the value above it',
  ],
  [
    /a line break is expected|end of the stream or a document separator/,
    'unexpected-text',
    'a line holds text after a complete value, where YAML expects a new line',
  ],
  [/nesting exceeded maxDepth/, 'too-deep', 'the frontmatter nests too deeply'],
  [
    /non-printable|null byte/,
    'control-character',
    'the frontmatter holds a control character YAML does not allow',
  ],
  [
    /unknown tag|cannot resolve a node|unacceptable node kind/,
    'bad-tag',
    'a value has a tag (!name) that cannot be applied to it',
  ],
];

function describeParserError(error: unknown): YamlFailure {
  if (error instanceof AliasBudgetExceeded) return error.failure;
  if (error instanceof BinaryValue) {
    return {
      code: 'binary',
      message: 'a value is tagged !!binary; agent files hold text, so binary values are refused',
    };
  }
  const reason = (error as { reason?: unknown } | null)?.reason;
  const mark = (error as { mark?: { line?: unknown } } | null)?.mark;
  const line = typeof mark?.line === 'number' ? mark.line + 1 : undefined;
  const text = typeof reason === 'string' ? reason : '';
  const known = PARSER_MESSAGES.find(([pattern]) => pattern.test(text));
  return {
    code: known?.[1] ?? 'yaml',
    message: known?.[2] ?? 'the text is not valid YAML',
    ...(line === undefined ? {} : { line }),
  };
}

type Measure = { expansion: number; cyclic: boolean };

// Walks the value once: an object met again through a shared reference is an alias (its size
// counts again, as it would when expanded), and an object met inside itself is a cycle.
function measureAliases(value: unknown): Measure {
  const sizes = new Map<object, number>();
  const onPath = new Set<object>();
  const state: Measure = { expansion: 0, cyclic: false };
  const sizeOf = (item: unknown): number => {
    if (state.cyclic || typeof item !== 'object' || item === null) return 1;
    const known = sizes.get(item);
    if (known !== undefined) {
      state.expansion += known;
      return known;
    }
    if (onPath.has(item)) {
      state.cyclic = true;
      return 1;
    }
    onPath.add(item);
    let size = 1;
    for (const child of Object.values(item)) size += sizeOf(child);
    onPath.delete(item);
    sizes.set(item, size);
    return size;
  };
  sizeOf(value);
  return state;
}

// 1-based lines of top-level keys: lines that start at column 0 with a plain or quoted key.
function findTopLevelKeyLines(text: string, record: object): Map<string, number> {
  const keyLines = new Map<string, number>();
  const pattern =
    /^(?:"((?:[^"\\]|\\.)*)"|'((?:[^']|'')*)'|([^\s#'"?:,[\]{}&*!|>%@`-][^:#]*?|-[^\s:#][^:#]*?))[ \t]*:(?=\s|$)/;
  text.split('\n').forEach((line, index) => {
    const match = pattern.exec(line);
    if (match === null) return;
    const key = match[1] ?? match[2]?.replace(/''/g, "'") ?? match[3] ?? '';
    if (Object.prototype.hasOwnProperty.call(record, key)) keyLines.set(key, index + 1);
  });
  return keyLines;
}

/** Failure codes that are Delegate's own limits rather than YAML errors. */
export const YAML_LIMIT_CODES: ReadonlySet<string> = new Set([
  'alias-bomb',
  'self-referencing-alias',
  'binary',
  'too-deep',
  'too-long',
]);

function closingQuote(line: string, quote: string, from: number): number {
  for (let index = from; index < line.length; index++) {
    const character = line.charAt(index);
    if (quote === '"' && character === '\\') index += 1;
    else if (character === quote) {
      if (quote === "'" && line.charAt(index + 1) === "'") index += 1;
      else return index;
    }
  }
  return -1;
}

// A quoted value that runs on over a line no more indented than its key, which YAML forbids
// (js-yaml alone would accept it); returns that line (1-based).
function findUnindentedQuotedLine(text: string): number | undefined {
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const opening = /^( *)(?:- +|[^\s#'"][^#]*?: +)(["'])/.exec(line);
    if (opening === null) continue;
    const quote = opening[2] ?? '"';
    if (closingQuote(line, quote, opening[0].length) !== -1) continue;
    const indent = opening[1]?.length ?? 0;
    for (let next = index + 1; next < lines.length; next++) {
      const continued = lines[next] ?? '';
      if (continued.trim() === '') continue;
      const continuedIndent = /^ */.exec(continued)?.[0].length ?? 0;
      if (continuedIndent <= indent) return next + 1;
      if (closingQuote(continued, quote, 0) !== -1) break;
    }
  }
  return undefined;
}

/**
 * Reads any YAML text with `js-yaml` (YAML 1.2, core schema; unknown tags read as untagged),
 * refusing repeated keys unless `duplicateKeys` is `last-wins`, alias bombs, self-referencing
 * aliases and `!!binary` values. It never throws. The caller counts aliases and bounds the
 * text's size and nesting first.
 */
export function parseFullYaml(text: string, duplicateKeys: DuplicateKeys): FullYamlResult {
  const unindented = findUnindentedQuotedLine(text);
  if (unindented !== undefined) {
    return {
      ok: false,
      failure: {
        code: 'unindented-quote',
        line: unindented,
        message: 'a quoted value continues on a line that is not indented past its key',
      },
    };
  }
  const { module, schema } = loadParser();
  let value: unknown;
  try {
    const options: LoadOptions = {
      schema,
      json: duplicateKeys === 'last-wins',
      maxDepth: PARSER_MAX_DEPTH,
      listener: createAliasBudget(),
    };
    value = module.load(text, options);
  } catch (error) {
    return { ok: false, failure: describeParserError(error) };
  }
  const measured = measureAliases(value);
  if (measured.cyclic) {
    return {
      ok: false,
      failure: {
        code: 'self-referencing-alias',
        message: 'an alias refers to the value it is part of (a self-referencing alias)',
      },
    };
  }
  if (measured.expansion > MAX_YAML_ALIAS_EXPANSION) {
    return {
      ok: false,
      failure: {
        code: 'alias-bomb',
        message: `its aliases expand to more than ${MAX_YAML_ALIAS_EXPANSION} values (a possible alias bomb)`,
      },
    };
  }
  const keyLines =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? findTopLevelKeyLines(text, value)
      : new Map<string, number>();
  return { ok: true, value, keyLines };
}
