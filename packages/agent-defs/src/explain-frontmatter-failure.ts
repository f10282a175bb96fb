import { KNOWN_AGENT_KEYS } from './normalize-agent-fields.js';
import { type YamlFailure } from './parse-full-yaml.js';
import { repairQuotesValue } from './repair-like-claude-code.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';

/** A frontmatter problem described for a person: where, what, and what to do. */
export type FrontmatterExplanation = {
  /** 1-based line of the file. */
  line?: number;
  /** The explanation. */
  reason: string;
};

/** Input of {@link explainFrontmatterFailure}. */
export type ExplainFrontmatterFailureOptions = {
  /** The frontmatter YAML that could not be read. */
  yaml: string;
  /** Why the last attempt failed. */
  failure: YamlFailure;
  /** Why strict YAML failed, when the repair pass was tried as well. */
  strictFailure?: YamlFailure;
  /** 1-based line of the file on which the YAML starts; lines are reported as file lines. */
  yamlStartLine: number;
};

const TOP_LEVEL_KEY = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$/;

function snippet(line: string): string {
  return JSON.stringify(truncateForDiagnostic(line.trim()));
}

function isPlainStart(value: string): boolean {
  return value !== '' && !/^["'[{|>&*!#]/.test(value);
}

// Whether a value that opens with a quote also closes it on the same line.
function closesQuote(value: string): boolean {
  const quote = value.charAt(0);
  for (let index = 1; index < value.length; index++) {
    const character = value.charAt(index);
    if (quote === '"' && character === '\\') index += 1;
    else if (character === quote) {
      if (quote === "'" && value.charAt(index + 1) === "'") index += 1;
      else return true;
    }
  }
  return false;
}

// When the keys above a stray line are not agent keys (the `user:` and `assistant:` lines of an
// example) and `description` is above them, the description the lines probably continue, with
// the keys in between.
function findOwner(
  lines: readonly string[],
  index: number,
): { key: string; index: number; between: string[] } | undefined {
  const between: string[] = [];
  for (let above = index; above >= 0; above--) {
    const key = TOP_LEVEL_KEY.exec(lines[above] ?? '')?.[1];
    if (key === undefined) continue;
    if (KNOWN_AGENT_KEYS.includes(key)) {
      return key !== 'description' || between.length === 0
        ? undefined
        : { key, index: above, between };
    }
    if (!between.includes(key)) between.unshift(key);
  }
  return undefined;
}

// A line at column 0 that is neither a key nor part of the value above it.
function explainStrayLine(
  lines: readonly string[],
  options: { index: number; next: number; key: string; quoted: boolean; offset: number },
): FrontmatterExplanation {
  const { index, next, key, quoted, offset } = options;
  const line = lines[next] ?? '';
  const stray = `line ${next + offset} (${snippet(line)}) starts at the beginning of the line and is not a \`key: value\` line, so YAML cannot read it`;
  const owner = findOwner(lines, index);
  if (owner !== undefined) {
    const names = owner.between.slice(0, 3).map((name) => `\`${truncateForDiagnostic(name)}:\``);
    const keys =
      names.length === 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
    return {
      line: next + offset,
      reason: `${stray}; it looks like the text of \`${owner.key}\` (line ${owner.index + offset}) goes on over the lines below it, whose ${keys} lines YAML reads as keys of their own — ${BLOCK_SCALAR_FIX(owner.key)}`,
    };
  }
  return {
    line: next + offset,
    reason: quoted
      ? `${stray}; the quoted value of \`${key}\` ends on line ${index + offset} — move the text inside the quotes, or remove it`
      : `line ${next + offset} (${snippet(line)}) starts at the beginning of the line, so YAML does not read it as part of the value of \`${key}\` above; indent it, or write the value as a block scalar (|)`,
  };
}

const BLOCK_SCALAR_FIX = (key: string): string =>
  `write it as a block scalar (\`${key}: |\` with every line of the text indented below it), or on one line with \\n for the line breaks`;

// The first line after `index` that goes on with the value of its key (not blank, not a
// comment, not another key), or -1.
function firstContinuationLine(lines: readonly string[], index: number): number {
  for (let next = index + 1; next < lines.length; next++) {
    const line = lines[next] ?? '';
    if (line.trim() === '' || /^\s*#/.test(line)) continue;
    if (TOP_LEVEL_KEY.test(line) || /^- /.test(line)) return -1;
    return next;
  }
  return -1;
}

// Problems with the lines that follow a top-level `key: value`, up to the next key.
function explainContinuation(
  lines: readonly string[],
  index: number,
  key: string,
  value: string,
  offset: number,
  crlf: boolean,
): FrontmatterExplanation | undefined {
  const quoted = /^["']/.test(value);
  const open = quoted && !closesQuote(value);
  // Claude Code's repair quotes the first line of such a value and nothing below it.
  const repairCuts = !crlf && isPlainStart(value) && repairQuotesValue(value);
  for (let next = index + 1; next < lines.length; next++) {
    const line = lines[next] ?? '';
    if (line.trim() === '' || /^\s*#/.test(line)) continue;
    if (TOP_LEVEL_KEY.test(line) || /^- /.test(line)) return undefined;
    if (repairCuts && /^\s/.test(line)) {
      return {
        line: next + offset,
        reason: `the value of \`${key}\` (line ${index + offset}) goes on over the indented lines below it, but its first line holds ${/: /.test(value) ? "': '" : 'a special character'}, so Claude Code's repair puts that line alone in quotes and YAML cannot read line ${next + offset} (${snippet(line)}) — ${BLOCK_SCALAR_FIX(key)}`,
      };
    }
    if (/^\S/.test(line)) {
      if (open) {
        return {
          line: next + offset,
          reason: `the quoted value of \`${key}\` (line ${index + offset}) continues on line ${next + offset} at the start of the line, which YAML does not allow; indent every line of the value after the first`,
        };
      }
      return explainStrayLine(lines, { index, next, key, quoted, offset });
    }
    // Under a key with no value of its own (`hooks:`), indented keys are its nested mapping.
    if (!quoted && value !== '' && /: |:$/.test(line.trim())) {
      return {
        line: next + offset,
        reason: `the value of \`${key}\` continues on line ${next + offset} with ${snippet(line)}, which YAML reads as a new key; quote the value or use a block scalar (|)`,
      };
    }
  }
  return undefined;
}

// A line-level pattern that both strict YAML and Claude Code's repair refuse.
function explainLine(
  lines: readonly string[],
  index: number,
  crlf: boolean,
  offset: number,
): FrontmatterExplanation | undefined {
  const match = TOP_LEVEL_KEY.exec(lines[index] ?? '');
  if (match === null) return undefined;
  const key = match[1] ?? '';
  const value = (match[2] ?? '').trim();
  if (isPlainStart(value) && /: /.test(value) && crlf) {
    return {
      line: index + offset,
      reason: `the value of \`${key}\` holds ': ', which YAML reads as a nested key; Claude Code repairs such values only in files with LF line ends, and this file has CRLF line ends — put the value in quotes (or save the file with LF line ends)`,
    };
  }
  if (isPlainStart(value) && /:$/.test(value) && !/: /.test(value)) {
    const next = firstContinuationLine(lines, index);
    return {
      line: index + offset,
      reason:
        next === -1
          ? `the value of \`${key}\` ends with ':', which YAML reads as a nested key; put the value in quotes`
          : `the value of \`${key}\` ends with ':', which YAML reads as a nested key, and its text goes on below it (line ${next + offset}: ${snippet(lines[next] ?? '')}) — ${BLOCK_SCALAR_FIX(key)}`,
    };
  }
  return explainContinuation(lines, index, key, value, offset, crlf);
}

const BLOCK_INDICATOR = /^[|>][+-]?[1-9]?[+-]?(?:\s+#.*)?$/;

// A line indented with tabs, which YAML does not allow: Claude Code's repair turns leading tabs
// into spaces, but it also quotes a lone `|` or `>`, so a tab-indented block scalar is lost,
// and a tab before a key makes that key part of the value above it.
function explainTabs(lines: readonly string[], offset: number): FrontmatterExplanation | undefined {
  const index = lines.findIndex((line) => line.startsWith('\t'));
  if (index === -1) return undefined;
  let owner = index - 1;
  while (owner >= 0 && !TOP_LEVEL_KEY.test(lines[owner] ?? '')) owner -= 1;
  const match = TOP_LEVEL_KEY.exec(lines[owner] ?? '');
  const key = match?.[1];
  const value = (match?.[2] ?? '').trim();
  const line = index + offset;
  if (key !== undefined && BLOCK_INDICATOR.test(value)) {
    return {
      line,
      reason: `the block of \`${key}\` (line ${owner + offset}) is indented with tabs on line ${line}, which YAML does not allow; Claude Code's repair turns the tabs into spaces but also puts the ${JSON.stringify(value.charAt(0))} in quotes, so it cannot read the block either — indent it with spaces`,
    };
  }
  // Under a key with a value on its line; under `hooks:` alone a nested key is fine.
  if (key !== undefined && value !== '' && TOP_LEVEL_KEY.test((lines[index] ?? '').trimStart())) {
    return {
      line,
      reason: `line ${line} starts with a tab, which YAML does not allow for indentation; Claude Code's repair reads the tab as spaces, which makes the line part of the value of \`${key}\` above — remove the tab`,
    };
  }
  return undefined;
}

// The parser notices an unclosed quote where the text ends; the line to fix is the last one,
// at or before that, on which a value opens a quote that the line does not close.
function withOpeningLine(failure: YamlFailure, lines: readonly string[]): YamlFailure {
  if (failure.code !== 'unclosed-quote' || failure.line === undefined) return failure;
  for (let index = Math.min(failure.line, lines.length) - 1; index >= 0; index--) {
    const opening = /^ *(?:- +|[^\s#'"][^#]*?: +)?(["'].*)$/.exec(lines[index] ?? '');
    if (opening?.[1] !== undefined && !closesQuote(opening[1])) {
      return {
        ...failure,
        line: index + 1,
        message: 'a quoted value opens on this line and is never closed',
      };
    }
  }
  return failure;
}

/**
 * Explains why frontmatter could not be read, for the patterns real files get wrong (a value
 * continued on lines that look like keys, text wrapped to the start of a line, a quoted value
 * continued without indentation, `: ` in a CRLF file), and otherwise in general words with
 * the line. Quotes at most 40 characters of the file.
 */
export function explainFrontmatterFailure(
  options: ExplainFrontmatterFailureOptions,
): FrontmatterExplanation {
  const crlf = options.yaml.includes('\r\n');
  const lines = options.yaml.split('\n').map((line) => line.replace(/\r$/, ''));
  const offset = options.yamlStartLine;
  const tabs = explainTabs(lines, offset);
  if (tabs !== undefined) return tabs;
  for (let index = 0; index < lines.length; index++) {
    const explained = explainLine(lines, index, crlf, offset);
    if (explained !== undefined) return explained;
  }
  const { strictFailure } = options;
  const failure = withOpeningLine(options.failure, lines);
  const toFile = (line: number): number => line + offset - 1;
  const where = failure.line === undefined ? '' : ` on line ${toFile(failure.line)}`;
  const strict =
    strictFailure === undefined || strictFailure.code === failure.code
      ? ''
      : `; strict YAML fails first${strictFailure.line === undefined ? '' : ` on line ${toFile(strictFailure.line)}`} (${strictFailure.message}), and Claude Code's repair of that leaves this`;
  return {
    ...(failure.line === undefined ? {} : { line: toFile(failure.line) }),
    reason: `invalid YAML frontmatter${where}: ${failure.message}${strict}; check the quoting and indentation there`,
  };
}
