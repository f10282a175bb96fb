import { dirname } from 'node:path';
import { type AgentDefinition, type AgentSource } from '@delegate/core';
import { type AgentDiagnostic, type ParseAgentResult } from './agent-diagnostic.js';
import { describeFrontmatterReading } from './describe-frontmatter-reading.js';
import { explainFrontmatterFailure } from './explain-frontmatter-failure.js';
import { explainMissingFrontmatter } from './explain-missing-frontmatter.js';
import { explainSlashCommand } from './explain-slash-command.js';
import { guessAgentName } from './guess-agent-name.js';
import { looksLikeSlashCommand } from './looks-like-slash-command.js';
import { KNOWN_AGENT_KEYS, normalizeAgentFields } from './normalize-agent-fields.js';
import { parseFrontmatterYaml, type FrontmatterReading } from './parse-frontmatter-yaml.js';
import { quoteForDiagnostic } from './quote-for-diagnostic.js';
import { readCutFrontmatter } from './read-cut-frontmatter.js';
import {
  PLUGIN_IGNORED_KEYS,
  findPluginFolderProblem,
  pluginAgentType,
  pluginFallbackDescription,
  pluginFileAgentName,
} from './plugin-agent-rules.js';
import { splitFrontmatter, type NoFrontmatterReason } from './split-frontmatter.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';
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
  /**
   * Plugin that supplied the file. The file is then read as Claude Code reads a plugin's agent:
   * the type is `plugin:name` (with each folder between `baseDir` and the file:
   * `plugin:folder:name`), a file without `name` is named after the file, and `permissionMode`,
   * `hooks` and `mcpServers` are ignored.
   */
  plugin?: string;
};

type Problem = Omit<AgentDiagnostic, 'filePath' | 'severity'>;

// One YAML reading turned into a definition, or the reason Claude Code would skip the file.
type Built =
  | {
      ok: true;
      agent: AgentDefinition;
      warnings: AgentDiagnostic[];
      record: Record<string, unknown>;
    }
  | { ok: false; problem: Problem };

type Context = {
  options: ParseAgentFromMarkdownOptions;
  yamlStartLine: number;
  body: string;
};

function typeOf(options: ParseAgentFromMarkdownOptions, name: string): string {
  const { plugin, baseDir, filePath } = options;
  return plugin === undefined ? name : pluginAgentType({ plugin, baseDir, filePath }, name);
}

// A key spelled like `key` in another letter case (`Name` for `name`).
function otherCase(record: Record<string, unknown>, key: string): string | undefined {
  return Object.keys(record).find(
    (candidate) => candidate !== key && candidate.toLowerCase() === key,
  );
}

function readName(
  record: Record<string, unknown>,
  at: (key: string) => { line?: number },
  options: ParseAgentFromMarkdownOptions,
): { ok: true; name: string } | { ok: false; problem: Problem } {
  // Claude Code names a plugin's agent file that sets no name after the file (many plugins
  // write only a description).
  const name =
    options.plugin !== undefined &&
    (record.name === undefined || record.name === null || record.name === '')
      ? pluginFileAgentName(options.filePath)
      : record.name;
  if (typeof name !== 'string' || name.length === 0) {
    const cased = otherCase(record, 'name');
    const suggested = pluginFileAgentName(options.filePath);
    const example =
      /^[\w.-]+$/.test(suggested) && validateAgentName(suggested) === undefined
        ? suggested
        : 'your-agent-name';
    return {
      ok: false,
      problem: {
        ...at(cased ?? 'name'),
        reason:
          cased !== undefined && (name === undefined || name === null)
            ? `missing \`name\`: the frontmatter has \`${cased}\`, but keys are case-sensitive, so Claude Code does not read it as the name either; write \`name\``
            : name === null && 'name' in record
              ? `\`name\` has no value: YAML reads an empty value, \`null\` or \`~\` as none, so Claude Code sees no name either; write the name in quotes (\`name: "null"\`) or pick another, such as \`name: ${example}\``
              : name === undefined || name === null || name === ''
                ? `missing \`name\`; add \`name: ${example}\` to the frontmatter`
                : `\`name\` must be text, not ${Array.isArray(name) ? 'a list' : typeof name}; put it in quotes`,
      },
    };
  }
  const problem = validateAgentName(name);
  if (problem === undefined) return { ok: true, name };
  return {
    ok: false,
    problem: {
      ...at('name'),
      // The type a request would name, so the caller can say why it is missing.
      agentType: name,
      reason: `\`name\` ${JSON.stringify(truncateForDiagnostic(name))} ${problem}; use letters, digits and dashes`,
    },
  };
}

function readDescription(
  record: Record<string, unknown>,
  at: (key: string) => { line?: number },
): { ok: true; whenToUse: string } | { ok: false; problem: Problem } {
  const description = record.description;
  if (typeof description === 'string' && description.length > 0) {
    // Real files write `\n` inside plain YAML values, where YAML keeps it literally.
    return { ok: true, whenToUse: description.replace(/\\n/g, '\n').trim() };
  }
  const cased = otherCase(record, 'description');
  return {
    ok: false,
    problem: {
      ...at(cased ?? 'description'),
      reason:
        cased !== undefined && (description === undefined || description === null)
          ? `missing \`description\`: the frontmatter has \`${cased}\`, but keys are case-sensitive, so Claude Code does not read it either; write \`description\``
          : description === undefined || description === null || description === ''
            ? 'missing `description`; add one saying when the main agent should use this agent'
            : `\`description\` must be text, not ${Array.isArray(description) ? 'a list' : typeof description}; put it in quotes`,
    },
  };
}

function build(reading: FrontmatterReading & { ok: true }, context: Context): Built {
  const { options, yamlStartLine } = context;
  const { filePath } = options;
  const toFileLine = (line: number): number => line + yamlStartLine - 1;
  const lineOf = (key: string): number | undefined => {
    const line = reading.keyLines.get(key);
    return line === undefined ? undefined : toFileLine(line);
  };
  const at = (key: string): { line?: number } => {
    const line = lineOf(key);
    return line === undefined ? {} : { line };
  };
  const name = readName(reading.record, at, options);
  if (!name.ok) return name;
  const agentType = typeOf(options, name.name);
  const pluginWarnings: AgentDiagnostic[] = [];
  const record =
    options.plugin === undefined
      ? reading.record
      : withoutPluginIgnoredKeys(reading.record, (key) => {
          pluginWarnings.push({
            filePath,
            agentType,
            ...at(key),
            severity: 'warning',
            reason: `\`${key}\` is ignored in a plugin's agent file, as Claude Code ignores it there (a plugin agent may not set permissionMode, hooks or mcpServers); copy the file into .claude/agents to use it`,
          });
        });
  let description = readDescription(record, at);
  if (!description.ok && options.plugin !== undefined) {
    const fallback = pluginFallbackDescription(options.plugin);
    pluginWarnings.push({
      filePath,
      agentType,
      ...at('description'),
      severity: 'warning',
      reason: `${description.problem.reason.replace(/;.*$/, '').replace(/, so Claude Code does not read it either$/, '')}, so the main agent sees only ${JSON.stringify(fallback)}, as in Claude Code, and cannot tell when to use this agent; add a description saying when to use it`,
    });
    description = { ok: true, whenToUse: fallback };
  }
  if (!description.ok) return { ok: false, problem: { ...description.problem, agentType } };
  const normalized = normalizeAgentFields(record, { filePath, agentType, lineOf });
  if (!normalized.ok) return { ok: false, problem: normalized.diagnostic };
  const systemPrompt = context.body.trim();
  const agent: AgentDefinition = {
    agentType,
    whenToUse: description.whenToUse,
    ...normalized.fields,
    source: options.source,
    baseDir: options.baseDir,
    filePath,
    ...(options.plugin === undefined ? {} : { plugin: options.plugin }),
    getSystemPrompt: () => systemPrompt,
  };
  const warnings = [
    ...describeFrontmatterReading({ reading, record, filePath, agentType, toFileLine }),
    ...pluginWarnings,
    ...normalized.warnings,
  ];
  return { ok: true, agent, warnings, record };
}

// Why a frontmatter could not be read, with the line in the file.
function readFailure(
  reading: FrontmatterReading & { ok: false },
  yaml: string,
  yamlStartLine: number,
): { line?: number; reason: string } {
  if (reading.stage !== 'yaml') {
    return {
      ...(reading.failure.line === undefined
        ? {}
        : { line: reading.failure.line + yamlStartLine - 1 }),
      reason: reading.failure.message,
    };
  }
  return explainFrontmatterFailure({
    yaml,
    yamlStartLine,
    failure: reading.failure,
    ...(reading.strictFailure === undefined ? {} : { strictFailure: reading.strictFailure }),
  });
}

function emptyBodyWarning(agent: AgentDefinition): AgentDiagnostic[] {
  if (agent.getSystemPrompt().length > 0) return [];
  return [
    {
      filePath: agent.filePath ?? agent.baseDir,
      agentType: agent.agentType,
      severity: 'warning',
      reason:
        'the body is empty, so the agent has no system prompt; write its instructions below the frontmatter',
    },
  ];
}

// A Markdown page of a documentation site (its frontmatter has `title`, perhaps `description`,
// and no other agent key, in any case) that sits in an agents folder.
function isDocumentationPage(record: Record<string, unknown>): boolean {
  const keys = Object.keys(record).map((key) => key.toLowerCase());
  return (
    keys.includes('title') &&
    !KNOWN_AGENT_KEYS.some((known) => known !== 'description' && keys.includes(known.toLowerCase()))
  );
}

function withoutPluginIgnoredKeys(
  record: Record<string, unknown>,
  ignored: (key: string) => void,
): Record<string, unknown> {
  if (!PLUGIN_IGNORED_KEYS.some((key) => Object.hasOwn(record, key))) return record;
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (PLUGIN_IGNORED_KEYS.includes(key)) ignored(key);
    else kept[key] = value;
  }
  return kept;
}

const UNREAD_FRONTMATTER: Record<NoFrontmatterReason | 'unclosed', string> = {
  'no-frontmatter': 'no YAML frontmatter (a file that does not start with ---)',
  'blank-line-before': 'the frontmatter follows blank lines, so it is not read',
  'comment-before': 'an HTML comment comes before the frontmatter, so it is not read',
  'text-before': 'text comes before the frontmatter, so it is not read',
  'opening-not-alone': 'the first line holds more than ---, so no frontmatter is read',
  indented: 'the frontmatter is indented, so it is not read',
  'carriage-return-line-ends':
    'the file ends its lines with a lone carriage return (CR), so no frontmatter is read',
  unclosed: 'the frontmatter opened with --- on line 1 is never closed, so it is not read',
};

// A plugin's agent file whose frontmatter Claude Code does not read (none, or YAML it cannot
// parse): Claude Code still loads it, named after the file, with the plugin's placeholder
// description and every tool. Delegate does the same and says so.
function pluginAgentWithoutFrontmatter(
  options: ParseAgentFromMarkdownOptions & { plugin: string },
  body: string,
  why: { line?: number; reason: string; fix?: string },
): ParseAgentResult {
  const agentType = typeOf(options, pluginFileAgentName(options.filePath));
  const problem = validateAgentName(pluginFileAgentName(options.filePath));
  if (problem !== undefined) {
    return {
      ok: false,
      diagnostic: {
        filePath: options.filePath,
        severity: 'error',
        ...(why.line === undefined ? {} : { line: why.line }),
        reason: `${why.reason}; Claude Code would load it named after the file, but the file name ${problem}; rename the file or add a frontmatter with a name`,
      },
    };
  }
  const whenToUse = pluginFallbackDescription(options.plugin);
  const systemPrompt = body.trim();
  const agent: AgentDefinition = {
    agentType,
    whenToUse,
    source: options.source,
    baseDir: options.baseDir,
    filePath: options.filePath,
    plugin: options.plugin,
    getSystemPrompt: () => systemPrompt,
  };
  const fix =
    why.fix ??
    'give it a frontmatter with name, description and tools, or move it out of the agents folder if it is not an agent';
  const warning: AgentDiagnostic = {
    filePath: options.filePath,
    agentType,
    ...(why.line === undefined ? {} : { line: why.line }),
    severity: 'warning',
    reason: `${why.reason}; Claude Code still loads every .md file in a plugin's agents folder, so this is agent ${JSON.stringify(agentType)}, named after the file, described only as ${JSON.stringify(whenToUse)} and allowed every tool — ${fix}`,
  };
  return { ok: true, agent, warnings: [warning, ...emptyBodyWarning(agent)] };
}

function wholeText(content: string): string {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

function parse(options: ParseAgentFromMarkdownOptions): ParseAgentResult {
  const { filePath } = options;
  const fail = (problem: Problem): ParseAgentResult => ({
    ok: false,
    diagnostic: { filePath, severity: 'error', ...problem },
  });
  const { plugin } = options;
  const badFolder =
    plugin === undefined ? undefined : findPluginFolderProblem({ ...options, plugin });
  if (badFolder !== undefined) {
    return fail({
      reason: `the folder ${quoteForDiagnostic(badFolder.name)} in ${dirname(badFolder.folder)} ${badFolder.problem}, so it cannot be part of an agent type (plugin:folder:name) and its files are not loaded; rename the folder`,
    });
  }
  const parts = splitFrontmatter(options.content);
  if (plugin !== undefined && parts.kind !== 'frontmatter') {
    const reason = UNREAD_FRONTMATTER[parts.kind === 'none' ? parts.reason : 'unclosed'];
    const line = parts.kind === 'none' ? parts.line : 1;
    return pluginAgentWithoutFrontmatter({ ...options, plugin }, wholeText(options.content), {
      ...(line === undefined ? {} : { line }),
      reason,
    });
  }
  if (parts.kind === 'none') {
    const explained = explainMissingFrontmatter(parts);
    const guessed = parts.yaml === undefined ? undefined : guessAgentName(parts.yaml);
    return {
      ok: false,
      diagnostic: {
        filePath,
        ...explained,
        ...(guessed === undefined ? {} : { agentType: typeOf(options, guessed) }),
      },
    };
  }
  if (parts.kind === 'unclosed') {
    return fail({
      line: 1,
      reason:
        'the frontmatter opened with --- on line 1 is never closed; add a line with --- after the last key',
    });
  }
  const context: Context = { options, yamlStartLine: parts.yamlStartLine, body: parts.body };
  const claudeReading = parseFrontmatterYaml(parts.claudeYaml);
  if (!claudeReading.ok) {
    const explained = readFailure(claudeReading, parts.claudeYaml, parts.yamlStartLine);
    const guessed = guessAgentName(parts.wholeYaml ?? parts.claudeYaml);
    const cut =
      parts.wholeYaml === undefined
        ? ''
        : ` (Claude Code ends the frontmatter at the \`---\` on line ${parts.claudeEndLine}, inside a value; write the dashes another way)`;
    // Delegate's own limits (size, depth, aliases) still refuse a plugin's file.
    if (plugin !== undefined && claudeReading.stage !== 'limit') {
      return pluginAgentWithoutFrontmatter({ ...options, plugin }, parts.body, {
        ...(explained.line === undefined ? {} : { line: explained.line }),
        reason: `no field of the frontmatter is read, because YAML cannot read it`,
        fix: `${explained.reason}${cut}`,
      });
    }
    return fail({
      ...(explained.line === undefined ? {} : { line: explained.line }),
      reason: `${explained.reason}${cut}`,
      ...(guessed === undefined ? {} : { agentType: typeOf(options, guessed) }),
    });
  }
  if (plugin === undefined && Object.keys(claudeReading.record).length === 0) {
    // `---` twice at the top, then the keys: the empty block is the frontmatter and the keys,
    // up to the next `---`, are the start of the body.
    const keys = /^([\s\S]*?)^---/m.exec(parts.body)?.[1] ?? '';
    const name = /^\s*name\s*:/.test(keys) ? guessAgentName(keys) : undefined;
    if (name !== undefined) {
      return fail({
        line: parts.claudeEndLine,
        agentType: name,
        reason: `the frontmatter ends at the \`---\` on line ${parts.claudeEndLine} with nothing in it, so Claude Code reads no \`name\`: \`name: ${truncateForDiagnostic(name)}\` and the lines after it are read as the body — remove that \`---\` line`,
      });
    }
  }
  if (plugin === undefined && isDocumentationPage(claudeReading.record)) {
    return {
      ok: false,
      diagnostic: {
        filePath,
        severity: 'info',
        reason:
          'a page whose frontmatter has `title` but no `name` or other agent key (documentation, say); skipped as not an agent, as Claude Code skips it — if it is one, add `name:`',
      },
    };
  }
  const command =
    plugin === undefined
      ? looksLikeSlashCommand({ record: claudeReading.record, filePath, baseDir: options.baseDir })
      : undefined;
  if (command !== undefined)
    return { ok: false, diagnostic: { filePath, ...explainSlashCommand(command) } };
  const claude = build(claudeReading, context);
  if (!claude.ok) return fail(claude.problem);
  let chosen: { agent: AgentDefinition; warnings: AgentDiagnostic[] } = claude;
  if (parts.wholeYaml !== undefined && parts.wholeEndLine !== undefined) {
    const wholeReading = parseFrontmatterYaml(parts.wholeYaml);
    const whole = wholeReading.ok ? build(wholeReading, context) : undefined;
    chosen = readCutFrontmatter({
      claude,
      whole: whole?.ok === true ? whole : undefined,
      wholeParses: wholeReading.ok,
      claudeEndLine: parts.claudeEndLine,
      wholeEndLine: parts.wholeEndLine,
    });
  }
  return {
    ok: true,
    agent: chosen.agent,
    warnings: [...chosen.warnings, ...emptyBodyWarning(chosen.agent)],
  };
}

/**
 * Parses an agent Markdown file (YAML frontmatter plus a body that becomes the system
 * prompt) exactly as Claude Code reads it, explaining each file Claude Code would skip and
 * each reading a user may not expect. Never throws: any input gives a definition with
 * warnings or a diagnostic.
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
        reason: `could not be parsed: ${truncateForDiagnostic(error instanceof Error ? error.message : String(error))}`,
      },
    };
  }
}
