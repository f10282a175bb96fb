import { parseFullYaml } from './parse-full-yaml.js';

/** One line whose value the repair put in double quotes. */
export type QuotedLine = {
  /** 1-based line within the YAML text. */
  line: number;
  /** The key of the line. */
  key: string;
  /** The value as written (now read as this exact text). */
  value: string;
};

/** The YAML text after Claude Code's repair, and what the repair changed. */
export type RepairedYaml = {
  /** The repaired text; the same number of lines as the original. */
  text: string;
  /** Lines whose value was quoted. */
  quotedLines: QuotedLine[];
  /** 1-based lines whose leading tabs became spaces. */
  tabLines: number[];
};

// A top-level `key: value` line as Claude Code matches it. `.` does not match a carriage
// return, so in a file with CRLF line ends no line matches and nothing is quoted.
const KEY_VALUE_LINE = /^([a-zA-Z_-]+):\s+(.+)$/;
// A value holding any of these characters, or ': ', is quoted.
const NEEDS_QUOTES = /[{}[\]*&#!|>%@`]|: /;

// A value in quotes, or one `[…]` list (`[a] [b]` is text, and gets quoted).
function isAlreadyWrapped(value: string): boolean {
  if (value.startsWith('"') && value.endsWith('"')) return true;
  if (value.startsWith("'") && value.endsWith("'")) return true;
  if (!value.startsWith('[') || !value.endsWith(']')) return false;
  const list = parseFullYaml(value, 'error');
  return list.ok && Array.isArray(list.value);
}

/** Whether Claude Code's repair puts this value (the text after `key: ` on one line) in quotes. */
export function repairQuotesValue(value: string): boolean {
  return !isAlreadyWrapped(value) && NEEDS_QUOTES.test(value);
}

/**
 * Applies the one repair Claude Code makes to frontmatter that strict YAML refuses, line by
 * line: leading tabs become two spaces each, and a single-line `key: value` whose value is
 * neither in quotes nor one `[…]` list and holds `: ` or one of
 * `{ } [ ] * & # ! | > % @` or a backtick is put in double quotes (backslashes and quotes
 * escaped), so it reads as that exact text. The result is then parsed with repeated keys
 * allowed. This reproduces Claude Code's reading, including where it changes the meaning of
 * valid lines (`tools: Read # note` becomes the text `Read # note`).
 */
export function repairLikeClaudeCode(text: string): RepairedYaml {
  const quotedLines: QuotedLine[] = [];
  const tabLines: number[] = [];
  const lines = text.split('\n').map((original, index) => {
    let line = original;
    if (line.startsWith('\t')) {
      line = line.replace(/^\t+/, (tabs) => '  '.repeat(tabs.length));
      tabLines.push(index + 1);
    }
    const match = KEY_VALUE_LINE.exec(line);
    if (match === null) return line;
    const key = match[1] ?? '';
    const value = match[2] ?? '';
    if (!repairQuotesValue(value)) return line;
    quotedLines.push({ line: index + 1, key, value });
    return `${key}: "${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  });
  return { text: lines.join('\n'), quotedLines, tabLines };
}
