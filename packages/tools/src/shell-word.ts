import type { ShellSyntaxNode } from './shell-parser.js';

/** One word of a shell command as the parser sees it. */
export type ShellWord = {
  /** The word as written in the line. */
  text: string;
  /**
   * Its value after quote removal, when the line alone determines it; undefined when it
   * depends on something only known when the line runs (`$VAR`, `$(…)`, `$((…))`, `~`,
   * `x=~/p`, `$"…"`) or bash turns it into other words (`{a,b}`, `{1..3}`).
   */
  value?: string;
  /**
   * True when the shell may turn it into other or several words: unquoted globs (`*.ts`),
   * brace expansion (`{a,b}`) and unquoted expansions (`$VAR`, which word splitting can
   * split or drop).
   */
  mayExpand: boolean;
};

const simpleEscapes: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

/**
 * Decodes the body of a `$'…'` string as bash does, or returns undefined for forms it does
 * not model exactly: `\cX`, unknown escapes, a NUL (where bash cuts the string short) and
 * numeric escapes past ASCII (raw bytes, or characters whose bytes depend on the locale).
 */
export function decodeAnsiCString(body: string): string | undefined {
  let result = '';
  for (let index = 0; index < body.length; index++) {
    const character = body[index] ?? '';
    if (character !== '\\') {
      result += character;
      continue;
    }
    const next = body[index + 1];
    if (next === undefined) return undefined;
    const simple = simpleEscapes[next];
    if (simple !== undefined) {
      result += simple;
      index++;
      continue;
    }
    const numeric =
      /^x([0-9a-fA-F]{1,2})/.exec(body.slice(index + 1)) ??
      /^u([0-9a-fA-F]{1,4})/.exec(body.slice(index + 1)) ??
      /^U([0-9a-fA-F]{1,8})/.exec(body.slice(index + 1));
    if (numeric !== null) {
      const codePoint = Number.parseInt(numeric[1] ?? '', 16);
      if (codePoint === 0 || codePoint > 0x7f) return undefined;
      result += String.fromCodePoint(codePoint);
      index += numeric[0].length;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(body.slice(index + 1));
    if (octal !== null) {
      const code = Number.parseInt(octal[0], 8) & 0xff;
      if (code === 0 || code > 0x7f) return undefined;
      result += String.fromCharCode(code);
      index += octal[0].length;
      continue;
    }
    // `\cX` (control characters) and anything else: not modelled.
    return undefined;
  }
  return result;
}

/** Quote removal of an unquoted word: `\x` becomes `x`, and notes globs and brace expansion. */
function unquotedWord(text: string): { value: string; mayExpand: boolean } {
  let value = '';
  let glob = false;
  let brace = false;
  let comma = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index] ?? '';
    if (character === '\\') {
      const next = text[index + 1];
      index++;
      if (next !== undefined && next !== '\n') value += next;
      continue;
    }
    if (character === '*' || character === '?' || character === '[') glob = true;
    if (character === '{') brace = true;
    if (character === ',' || (character === '.' && text[index + 1] === '.')) comma = true;
    value += character;
  }
  return { value, mayExpand: glob || (brace && comma) };
}

/** Quote removal inside double quotes: only `\$`, `` \` ``, `\"`, `\\` and `\<newline>` are escapes. */
function doubleQuotedContent(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, escaped: string) => (escaped === '\n' ? '' : escaped));
}

function doubleQuoted(node: ShellSyntaxNode): ShellWord {
  let value: string | undefined = '';
  const children = node.children;
  for (let index = 0; index < children.length; index++) {
    const child = children[index];
    if (child === null || child === undefined || value === undefined) continue;
    const isQuote = child.type === '"' && (index === 0 || index === children.length - 1);
    if (isQuote) continue;
    if (child.type === 'string_content') value += doubleQuotedContent(child.text);
    // A bare `$` the grammar keeps apart is a literal dollar sign.
    else if (!child.isNamed) value += doubleQuotedContent(child.text);
    else value = undefined;
  }
  return { text: node.text, ...(value === undefined ? {} : { value }), mayExpand: false };
}

/**
 * The word a syntax node stands for: its value when the line determines it, and whether
 * the shell may expand it into other words. Used for command names and arguments.
 */
export function shellWordOf(node: ShellSyntaxNode): ShellWord {
  const text = node.text;
  switch (node.type) {
    case 'word': {
      const { value, mayExpand } = unquotedWord(text);
      // `~`, `~/x`, `~user`: tilde expansion gives a home folder only known when it runs.
      if (text.startsWith('~')) return { text, mayExpand };
      return { text, value, mayExpand };
    }
    case 'number':
      return { text, value: text, mayExpand: false };
    case 'raw_string':
      return { text, value: text.slice(1, -1), mayExpand: false };
    case 'string':
      return doubleQuoted(node);
    case 'ansi_c_string': {
      const value = decodeAnsiCString(text.slice(2, -1));
      return { text, ...(value === undefined ? {} : { value }), mayExpand: false };
    }
    case 'translated_string':
      // `$"…"`: bash may replace it with a translation from the locale's message catalog.
      return { text, mayExpand: false };
    case 'concatenation': {
      let value: string | undefined = '';
      let mayExpand = false;
      for (const child of node.namedChildren) {
        if (child === null) continue;
        const part = shellWordOf(child);
        mayExpand ||= part.mayExpand;
        value = value === undefined || part.value === undefined ? undefined : value + part.value;
      }
      return { text, ...(value === undefined ? {} : { value }), mayExpand };
    }
    case 'process_substitution':
      // Becomes one path such as /dev/fd/63.
      return { text, mayExpand: false };
    default:
      // A bare token such as an escaped `\$` that the grammar keeps apart: plain text.
      if (!node.isNamed && /^(\\.|\$)$/s.test(text)) {
        const { value, mayExpand } = unquotedWord(text);
        return { text, value, mayExpand };
      }
      // $VAR, ${…}, $(…), `…`, $((…)), {1..3} and anything not modelled.
      return { text, mayExpand: true };
  }
}

/** The literal text of a here-document or here-string, or undefined when it holds expansions. */
export function literalInputOf(node: ShellSyntaxNode): string | undefined {
  if (node.type === 'heredoc_body') {
    const dynamic = node.namedChildren.some((child) => child?.type !== 'heredoc_content');
    return dynamic ? undefined : node.text;
  }
  return shellWordOf(node).value;
}
