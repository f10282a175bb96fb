import { type YamlFailure } from './parse-full-yaml.js';
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

// Problems with the lines that follow a top-level `key: value`, up to the next key.
function explainContinuation(
  lines: readonly string[],
  index: number,
  key: string,
  value: string,
  offset: number,
): FrontmatterExplanation | undefined {
  const quoted = /^["']/.test(value);
  for (let next = index + 1; next < lines.length; next++) {
    const line = lines[next] ?? '';
    if (line.trim() === '' || /^\s*#/.test(line)) continue;
    if (TOP_LEVEL_KEY.test(line) || /^- /.test(line)) return undefined;
    if (/^\S/.test(line)) {
      return {
        line: next + offset,
        reason: quoted
          ? `the quoted value of \`${key}\` (line ${index + offset}) continues on line ${next + offset} at the start of the line, which YAML does not allow; indent every line of the value after the first`
          : `line ${next + offset} (${snippet(line)}) starts at the beginning of the line, so YAML does not read it as part of the value of \`${key}\` above; indent it, or write the value as a block scalar (|)`,
      };
    }
    if (!quoted && /: |:$/.test(line.trim())) {
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
    return {
      line: index + offset,
      reason: `the value of \`${key}\` ends with ':', which YAML reads as a nested key; put the value in quotes`,
    };
  }
  return explainContinuation(lines, index, key, value, offset);
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
  for (let index = 0; index < lines.length; index++) {
    const explained = explainLine(lines, index, crlf, offset);
    if (explained !== undefined) return explained;
  }
  const { failure, strictFailure } = options;
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
