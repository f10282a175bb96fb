import { type AgentSource } from '@delegate/core';
import { type AgentDiagnostic, type ParseAgentResult } from './agent-diagnostic.js';
import { normalizeAgentFields, truncateForDiagnostic } from './normalize-agent-fields.js';
import { parseFrontmatterYaml } from './parse-frontmatter-yaml.js';
import { splitFrontmatter } from './split-frontmatter.js';
import { validateAgentName } from './validate-agent-name.js';

/** Input of {@link parseAgentFromMarkdown}. */
export type ParseAgentFromMarkdownOptions = {
  /** Path of the file, used in diagnostics and kept on the definition. */
  filePath: string;
  /** Agents directory the file was found in. */
  baseDir: string;
  /** The file's text. */
  content: string;
  /** Source the file belongs to. */
  source: AgentSource;
  /** Plugin that supplied the file; the agent type becomes `plugin:name`. */
  plugin?: string;
};

function parse(options: ParseAgentFromMarkdownOptions): ParseAgentResult {
  const { filePath } = options;
  const fail = (diagnostic: Omit<AgentDiagnostic, 'filePath'>): ParseAgentResult => ({
    ok: false,
    diagnostic: { filePath, ...diagnostic },
  });

  const parts = splitFrontmatter(options.content);
  if (parts.kind === 'none') {
    return fail({
      severity: 'info',
      reason: 'no YAML frontmatter (a file that does not start with ---); skipped as not an agent',
    });
  }
  if (parts.kind === 'unclosed') {
    return fail({
      line: parts.openingLine,
      severity: 'error',
      reason:
        'the frontmatter opened with --- is never closed; add a line with --- after the last key',
    });
  }

  const yaml = parseFrontmatterYaml(parts.yaml);
  const toFileLine = (line: number): number => line + parts.yamlStartLine - 1;
  if (!yaml.ok) {
    return fail({
      severity: 'error',
      reason: `invalid YAML frontmatter: ${yaml.reason}`,
      ...(yaml.line === undefined ? {} : { line: toFileLine(yaml.line) }),
    });
  }
  const { record } = yaml;
  const lineOf = (key: string): number | undefined => {
    const line = yaml.keyLines.get(key);
    return line === undefined ? undefined : toFileLine(line);
  };
  const at = (key: string): { line?: number } => {
    const line = lineOf(key);
    return line === undefined ? {} : { line };
  };

  const rawName = record.name;
  if (
    rawName === undefined ||
    rawName === null ||
    (typeof rawName === 'string' && rawName.trim() === '')
  ) {
    return fail({
      ...at('name'),
      severity: 'error',
      reason: 'missing `name`; add `name: your-agent-name` to the frontmatter',
    });
  }
  if (typeof rawName !== 'string') {
    return fail({
      ...at('name'),
      severity: 'error',
      reason: `\`name\` must be text, not ${typeof rawName}`,
    });
  }
  const name = rawName.trim();
  const nameProblem = validateAgentName(name);
  if (nameProblem !== undefined) {
    return fail({
      ...at('name'),
      severity: 'error',
      reason: `\`name\` ${JSON.stringify(truncateForDiagnostic(name))} ${nameProblem}; use letters, digits and dashes`,
    });
  }
  const agentType = options.plugin === undefined ? name : `${options.plugin}:${name}`;

  const rawDescription = record.description;
  if (
    rawDescription === undefined ||
    rawDescription === null ||
    (typeof rawDescription === 'string' && rawDescription.trim() === '')
  ) {
    return fail({
      ...at('description'),
      agentType,
      severity: 'error',
      reason: 'missing `description`; add one saying when the main agent should use this agent',
    });
  }
  if (typeof rawDescription !== 'string') {
    return fail({
      ...at('description'),
      agentType,
      severity: 'error',
      reason: `\`description\` must be text, not ${typeof rawDescription}`,
    });
  }
  // Real files write `\n` inside plain YAML values, where YAML keeps it literally.
  const whenToUse = rawDescription.replace(/\\n/g, '\n').trim();

  const normalized = normalizeAgentFields(record, { filePath, agentType, lineOf });
  if (!normalized.ok) return { ok: false, diagnostic: normalized.diagnostic };
  const warnings = normalized.warnings;
  if (yaml.repairedAt !== undefined) {
    warnings.unshift({
      filePath,
      agentType,
      line: toFileLine(yaml.repairedAt.line),
      // The file loads as its author meant, so this is a note rather than a warning.
      severity: 'info',
      reason: `frontmatter is not strict YAML (${yaml.repairedAt.message}); it was read as meant — ${yaml.repairedAt.advice} in the file`,
    });
  }
  if (parts.commentLine !== undefined) {
    warnings.unshift({
      filePath,
      agentType,
      line: parts.commentLine,
      severity: 'info',
      reason:
        'an HTML comment comes before the frontmatter; it was skipped, but tools that expect --- on the first line will not see this agent — move the comment below the frontmatter',
    });
  }
  const systemPrompt = parts.body.trim();
  if (systemPrompt.length === 0) {
    warnings.push({
      filePath,
      agentType,
      severity: 'warning',
      reason:
        'the body is empty, so the agent has no system prompt; write its instructions below the frontmatter',
    });
  }

  return {
    ok: true,
    agent: {
      agentType,
      whenToUse,
      ...normalized.fields,
      source: options.source,
      baseDir: options.baseDir,
      filePath,
      ...(options.plugin === undefined ? {} : { plugin: options.plugin }),
      getSystemPrompt: () => systemPrompt,
    },
    warnings,
  };
}

/**
 * Parses an agent Markdown file (YAML frontmatter plus a body that becomes the system
 * prompt). Never throws: any input gives a definition with warnings or a diagnostic.
 */
export function parseAgentFromMarkdown(options: ParseAgentFromMarkdownOptions): ParseAgentResult {
  try {
    return parse(options);
  } catch (error) {
    return {
      ok: false,
      diagnostic: {
        filePath: options.filePath,
        severity: 'error',
        reason: `could not be parsed: ${error instanceof Error ? error.message : String(error)}`,
      },
    };
  }
}
