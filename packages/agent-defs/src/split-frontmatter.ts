/** A Markdown file cut into its YAML frontmatter and its body. */
export type FrontmatterParts =
  | {
      /** The file has a complete `---` block. */
      kind: 'frontmatter';
      /** The YAML between the two `---` lines. */
      yaml: string;
      /** 1-based line of the file on which the YAML starts. */
      yamlStartLine: number;
      /** Everything after the closing `---`, untrimmed. */
      body: string;
      /** 1-based line of an HTML comment that comes before the opening `---`, if any. */
      commentLine?: number;
    }
  | {
      /** The block opens on `openingLine` but never closes. */
      kind: 'unclosed';
      /** 1-based line of the opening `---`. */
      openingLine: number;
    }
  | {
      /** The file does not start with `---`. */
      kind: 'none';
    };

const isBlank = (line: string | undefined): boolean => (line ?? '').trim() === '';

// Index of the first line after the HTML comment that starts at `start`, or -1 when the
// line does not open a comment or the comment never ends.
function skipHtmlComment(lines: readonly string[], start: number): number {
  if (!(lines[start] ?? '').trimStart().startsWith('<!--')) return -1;
  for (let index = start; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const from = index === start ? line.indexOf('<!--') + 4 : 0;
    const end = line.indexOf('-->', from);
    if (end === -1) continue;
    // Text after the comment on the same line means it is not a comment-only header.
    return line.slice(end + 3).trim() === '' ? index + 1 : -1;
  }
  return -1;
}

/**
 * Splits Markdown text into frontmatter and body. A leading byte-order mark is removed,
 * CRLF and lone CR line ends become LF, and blank lines before the opening `---` are allowed.
 * So are HTML comments (tools that manage agent files stamp them in), as long as the block
 * that follows them closes; otherwise the `---` is read as a Markdown rule and the file has
 * no frontmatter.
 */
export function splitFrontmatter(content: string): FrontmatterParts {
  const text = content.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  let opening = 0;
  let commentLine: number | undefined;
  for (;;) {
    while (opening < lines.length && isBlank(lines[opening])) opening += 1;
    const afterComment = skipHtmlComment(lines, opening);
    if (afterComment === -1) break;
    commentLine ??= opening + 1;
    opening = afterComment;
  }
  if (opening >= lines.length || (lines[opening] ?? '').trimEnd() !== '---')
    return { kind: 'none' };
  for (let index = opening + 1; index < lines.length; index++) {
    if ((lines[index] ?? '').trimEnd() === '---') {
      return {
        kind: 'frontmatter',
        yaml: lines.slice(opening + 1, index).join('\n'),
        yamlStartLine: opening + 2,
        body: lines.slice(index + 1).join('\n'),
        ...(commentLine === undefined ? {} : { commentLine }),
      };
    }
  }
  return commentLine === undefined
    ? { kind: 'unclosed', openingLine: opening + 1 }
    : { kind: 'none' };
}
