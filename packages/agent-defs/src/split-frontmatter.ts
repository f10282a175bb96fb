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

/**
 * Splits Markdown text into frontmatter and body. A leading byte-order mark is removed,
 * CRLF and lone CR line ends become LF, and blank lines before the opening `---` are allowed.
 */
export function splitFrontmatter(content: string): FrontmatterParts {
  const text = content.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  let opening = 0;
  while (opening < lines.length && (lines[opening] ?? '').trim() === '') opening += 1;
  if (opening >= lines.length || (lines[opening] ?? '').trimEnd() !== '---')
    return { kind: 'none' };
  for (let index = opening + 1; index < lines.length; index++) {
    if ((lines[index] ?? '').trimEnd() === '---') {
      return {
        kind: 'frontmatter',
        yaml: lines.slice(opening + 1, index).join('\n'),
        yamlStartLine: opening + 2,
        body: lines.slice(index + 1).join('\n'),
      };
    }
  }
  return { kind: 'unclosed', openingLine: opening + 1 };
}
