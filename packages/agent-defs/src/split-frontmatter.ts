/** Why a file has no frontmatter block that Claude Code reads. */
export type NoFrontmatterReason =
  /** Nothing that looks like frontmatter: an ordinary Markdown file. */
  | 'no-frontmatter'
  /** A `---` block follows blank lines at the top of the file. */
  | 'blank-line-before'
  /** A `---` block follows an HTML comment at the top of the file. */
  | 'comment-before'
  /** A `---` block follows other text (a heading, say). */
  | 'text-before'
  /** The first line holds `---` and more (`--- x`, `----`). */
  | 'opening-not-alone'
  /** The whole `---` block is indented (a copy out of a list or a code sample). */
  | 'indented'
  /** The file ends its lines with a lone carriage return, so the first line never ends. */
  | 'carriage-return-line-ends';

/** A Markdown file cut into its frontmatter and its body. */
export type FrontmatterParts =
  | {
      /** The file opens a `---` block that Claude Code reads. */
      kind: 'frontmatter';
      /** The YAML Claude Code reads: up to the first `---` anywhere after the opening line. */
      claudeYaml: string;
      /** 1-based line on which both YAML texts start. */
      yamlStartLine: number;
      /** 1-based line of the `---` that ends Claude Code's YAML. */
      claudeEndLine: number;
      /**
       * The YAML up to the first line that starts with `---`, when that differs from
       * `claudeYaml` (a `---` inside a value ends Claude Code's block early).
       */
      wholeYaml?: string;
      /** 1-based line of the line starting with `---` that closes `wholeYaml`. */
      wholeEndLine?: number;
      /** Everything after the block that was read (the whole one when it exists), line ends as LF. */
      body: string;
    }
  | {
      /** The block opens on line 1 but no `---` follows. */
      kind: 'unclosed';
    }
  | {
      /** There is no block Claude Code reads. */
      kind: 'none';
      /** Why. */
      reason: NoFrontmatterReason;
      /** 1-based line of the `---` that could have opened a block, for the reasons that have one. */
      line?: number;
      /** The YAML of that block, so a would-be agent name can be named. */
      yaml?: string;
    };

const OPENING_SEARCH_LIMIT = 64 * 1024;

/** The 1-based line of `text` that holds the character at `offset`. */
export function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  for (
    let index = text.indexOf('\n');
    index !== -1 && index < offset;
    index = text.indexOf('\n', index + 1)
  ) {
    line += 1;
  }
  return line;
}

function normalizeLineEnds(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

// Offset of the first line, at or after `from`, that starts with `---`; -1 when none does.
function findLineStartingWithDashes(text: string, from: number): number {
  if (text.startsWith('---', from)) return from;
  const found = text.indexOf('\n---', from);
  return found === -1 ? -1 : found + 1;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const DASH_LINE = /^---[ \t]*\r?$/;
const KEY_LINE = /^[A-Za-z_][\w-]*[ \t]*:/;

// Offsets of the `---` lines in `text` that are outside fenced code blocks (``` or ~~~).
function* dashLinesOutsideFences(text: string): Generator<{ offset: number; length: number }> {
  let fence: string | undefined;
  let offset = 0;
  for (const line of text.split('\n')) {
    const marker = FENCE.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (
      fence !== undefined &&
      marker !== undefined &&
      marker.startsWith(fence) &&
      line.trim() === marker
    )
      fence = undefined;
    else if (fence === undefined && DASH_LINE.test(line)) yield { offset, length: line.length };
    offset += line.length + 1;
  }
}

// A `---` block further down (after blank lines, a comment or a heading): where it would open
// and its YAML, so the file can be told how to become an agent. Only a block that reads like
// frontmatter counts: outside a code fence (a README showing the agent template in a
// ```markdown block is not a misplaced agent) and starting with a `key:` line (a `---`
// horizontal rule starts Markdown text).
function findLaterBlock(text: string): { offset: number; yaml: string } | undefined {
  const head = text.slice(0, OPENING_SEARCH_LIMIT);
  for (const opening of dashLinesOutsideFences(head)) {
    const start = opening.offset + opening.length + 1;
    const close = findLineStartingWithDashes(text, start);
    if (close === -1) return undefined;
    const yaml = text.slice(start, close);
    const firstLine = yaml.split('\n').find((line) => line.trim() !== '') ?? '';
    if (KEY_LINE.test(firstLine) && /^(?:name|description)\s*:/m.test(yaml)) {
      return { offset: opening.offset, yaml };
    }
  }
  return undefined;
}

// Blank lines, then an indented `---` alone on its line and an indented `name:` or
// `description:` line under it: frontmatter that was indented as a whole.
const INDENTED_BLOCK =
  /^((?:[ \t]*\r?\n)*)[ \t]+---[ \t]*\r?\n(?:[ \t]*\r?\n)*[ \t]+(?:name|description)[ \t]*:/;

function classifyMissing(text: string): FrontmatterParts {
  if (/^---[^\n]*\r[^\n]/.test(text) && !text.slice(0, 4096).includes('\n')) {
    return { kind: 'none', reason: 'carriage-return-line-ends', line: 1 };
  }
  const indented = INDENTED_BLOCK.exec(text);
  if (indented !== null) {
    return { kind: 'none', reason: 'indented', line: lineOfOffset(text, indented[1]?.length ?? 0) };
  }
  if (/^[ \t]*---/.test(text)) return { kind: 'none', reason: 'opening-not-alone', line: 1 };
  const later = findLaterBlock(text);
  if (later === undefined) return { kind: 'none', reason: 'no-frontmatter' };
  const before = text.slice(0, later.offset);
  const reason: NoFrontmatterReason =
    before.trim() === ''
      ? 'blank-line-before'
      : /^\s*<!--[\s\S]*-->\s*$/.test(before)
        ? 'comment-before'
        : 'text-before';
  return { kind: 'none', reason, line: lineOfOffset(text, later.offset), yaml: later.yaml };
}

/**
 * Cuts Markdown text into frontmatter and body the way Claude Code does: the text (after a
 * byte-order mark) must start with `---`, followed only by whitespace up to the end of that
 * line, and the YAML runs up to the first `---` after it, wherever that is — so `--- text`
 * and `--------` close the block, and so does a `---` inside a value. The YAML up to the first
 * line that starts with `---` is returned as well when it is longer, so a caller can read the
 * whole block. Only the frontmatter is scanned line by line; the body is sliced off as it is.
 */
export function splitFrontmatter(content: string): FrontmatterParts {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  if (!text.startsWith('---')) return classifyMissing(text);
  // `---` then whitespace containing a line break: the YAML starts after the last break.
  let index = 3;
  let lastBreak = -1;
  while (index < text.length && /\s/.test(text.charAt(index))) {
    if (text.charAt(index) === '\n') lastBreak = index;
    index += 1;
  }
  if (lastBreak === -1) return classifyMissing(text);
  const yamlStart = lastBreak + 1;
  const claudeEnd = text.indexOf('---', yamlStart);
  if (claudeEnd === -1) return { kind: 'unclosed' };
  const yamlStartLine = lineOfOffset(text, yamlStart);
  const claudeYaml = text.slice(yamlStart, claudeEnd);
  const claudeEndLine = yamlStartLine + (claudeYaml.match(/\n/g)?.length ?? 0);
  const wholeEnd = findLineStartingWithDashes(text, yamlStart);
  const bodyStart = (wholeEnd === -1 ? claudeEnd : wholeEnd) + 3;
  const parts: FrontmatterParts = {
    kind: 'frontmatter',
    claudeYaml,
    yamlStartLine,
    claudeEndLine,
    body: normalizeLineEnds(text.slice(bodyStart)),
  };
  if (wholeEnd !== -1 && wholeEnd !== claudeEnd) {
    const wholeYaml = text.slice(yamlStart, wholeEnd);
    parts.wholeYaml = wholeYaml;
    parts.wholeEndLine = yamlStartLine + (wholeYaml.match(/\n/g)?.length ?? 0);
  }
  return parts;
}
