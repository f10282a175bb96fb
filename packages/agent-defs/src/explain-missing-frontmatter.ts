import { type AgentDiagnostic } from './agent-diagnostic.js';
import { type FrontmatterParts } from './split-frontmatter.js';

/** Severity, line and reason for a file that has no frontmatter Claude Code reads. */
export type MissingFrontmatterExplanation = Pick<AgentDiagnostic, 'severity' | 'reason'> & {
  /** 1-based line of the `---` that could have opened the frontmatter. */
  line?: number;
};

/**
 * Says why a file is not read as an agent when its frontmatter is missing or misplaced. A
 * Markdown file with nothing like frontmatter gets a note (a README in an agents folder is
 * normal); a file whose `---` block Claude Code would not see gets an error saying how to fix it.
 */
export function explainMissingFrontmatter(
  parts: FrontmatterParts & { kind: 'none' },
): MissingFrontmatterExplanation {
  const at = parts.line === undefined ? {} : { line: parts.line };
  switch (parts.reason) {
    case 'no-frontmatter':
      return {
        severity: 'info',
        reason:
          'no YAML frontmatter (a file that does not start with ---); skipped as not an agent',
      };
    case 'blank-line-before':
      return {
        ...at,
        severity: 'error',
        reason:
          'the frontmatter follows blank lines, but it must start on the first line of the file, or Claude Code does not read the file as an agent; remove the blank lines above ---',
      };
    case 'comment-before':
      return {
        ...at,
        severity: 'error',
        reason:
          'an HTML comment comes before the frontmatter, so Claude Code does not read the file as an agent; move the comment below the frontmatter so --- is the first line',
      };
    case 'text-before':
      return {
        ...at,
        severity: 'error',
        reason:
          'text comes before the frontmatter, so Claude Code does not read the file as an agent; move the --- block to the top of the file',
      };
    case 'opening-not-alone':
      return {
        line: 1,
        severity: 'error',
        reason:
          'the first line holds more than ---, so Claude Code does not read a frontmatter; make the first line exactly ---',
      };
    case 'indented':
      return {
        ...at,
        severity: 'error',
        reason:
          'the frontmatter is indented, so Claude Code does not read the file as an agent; remove the indentation (and any blank lines above it) so the file starts with --- on its first line',
      };
    case 'carriage-return-line-ends':
      return {
        line: 1,
        severity: 'error',
        reason:
          'the file ends its lines with a lone carriage return (CR), so Claude Code finds no line break after the opening ---; save it with LF or CRLF line ends',
      };
  }
}
