import { type AgentDefinition } from '@delegate/core';
import { type AgentDiagnostic } from './agent-diagnostic.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';

/** One reading of a frontmatter turned into a definition. */
export type FrontmatterDefinition = {
  /** The definition the reading gives. */
  agent: AgentDefinition;
  /** The YAML mapping it was read from. */
  record: Record<string, unknown>;
  /** Notes made while reading it. */
  warnings: AgentDiagnostic[];
};

/** Input of {@link readCutFrontmatter}. */
export type CutFrontmatter = {
  /** Claude Code's reading: the lines above the `---` inside a value. */
  claude: FrontmatterDefinition;
  /** The whole block's reading, when it parses and gives a definition. */
  whole: FrontmatterDefinition | undefined;
  /** Whether the whole block is valid YAML (it may be, and still give no definition). */
  wholeParses: boolean;
  /** 1-based line of the `---` where Claude Code ends the frontmatter. */
  claudeEndLine: number;
  /** 1-based line of the line starting with `---` that ends the whole block. */
  wholeEndLine: number;
};

/** Most ignored keys a warning names; the rest are counted. */
const MAX_NAMED_KEYS = 8;

function same(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

// Whether `inner` allows no tool that `outer` does not (undefined and `*` allow every tool).
function allowsNoMore(
  inner: readonly string[] | undefined,
  outer: readonly string[] | undefined,
): boolean {
  if (outer === undefined || outer.includes('*')) return true;
  if (inner === undefined || inner.includes('*')) return false;
  return inner.every((tool) => outer.includes(tool));
}

function nameKeys(keys: readonly string[]): string {
  const named = keys.slice(0, MAX_NAMED_KEYS).map((key) => `\`${truncateForDiagnostic(key)}\``);
  const more = keys.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}

// Claude Code's definition, with only what the whole block adds that lets the agent do less:
// a tools list within Claude Code's, and more removed tools. The names of what it applied.
function narrow(
  claude: AgentDefinition,
  whole: AgentDefinition,
): {
  agent: AgentDefinition;
  applied: string[];
} {
  const agent: AgentDefinition = { ...claude };
  const applied: string[] = [];
  if (!same(whole.tools, claude.tools) && allowsNoMore(whole.tools, claude.tools)) {
    if (whole.tools === undefined) delete agent.tools;
    else agent.tools = whole.tools;
    applied.push('tools');
  }
  const removed = [
    ...new Set([...(claude.disallowedTools ?? []), ...(whole.disallowedTools ?? [])]),
  ];
  if (removed.length > (claude.disallowedTools ?? []).length) {
    agent.disallowedTools = removed;
    applied.push('disallowedTools');
  }
  return { agent, applied };
}

/**
 * Reads a frontmatter that a `---` inside a value cuts short, where Claude Code reads only the
 * lines above that `---`. Every field is Claude Code's; the whole block (up to the first line
 * that starts with `---`) may only narrow the agent — a `tools` list that allows no tool
 * Claude Code's reading does not, more `disallowedTools` — so the agent never gets a
 * permission mode, hook, MCP server, model, turn limit or anything else Claude Code would not
 * give it. The warning names the line of the cut and the fields of the whole block ignored.
 */
export function readCutFrontmatter(options: CutFrontmatter): {
  agent: AgentDefinition;
  warnings: AgentDiagnostic[];
} {
  const { claude, whole, claudeEndLine, wholeEndLine } = options;
  const where = {
    filePath: claude.agent.filePath ?? claude.agent.baseDir,
    agentType: claude.agent.agentType,
    line: claudeEndLine,
    severity: 'warning' as const,
  };
  const fix = 'write the dashes another way (— or ___) so both read the file the same';
  if (whole === undefined || whole.agent.agentType !== claude.agent.agentType) {
    const why = options.wholeParses ? 'does not give the same agent' : 'is not valid YAML';
    return {
      agent: claude.agent,
      warnings: [
        {
          ...where,
          reason: `Claude Code ends this frontmatter at the \`---\` on line ${claudeEndLine}, inside a value, and reads only the lines above it; the whole block up to line ${wholeEndLine} ${why}, so Delegate reads the file as Claude Code does — ${fix}`,
        },
        ...claude.warnings,
      ],
    };
  }
  const { agent, applied } = narrow(claude.agent, whole.agent);
  const ignored = Object.keys(whole.record).filter(
    (key) => !applied.includes(key) && !same(whole.record[key], claude.record[key]),
  );
  const kept =
    applied.length === 0
      ? ''
      : `; only the whole block's ${applied.map((key) => `\`${key}\``).join(' and ')}, which let the agent do less, are applied`;
  const reason =
    ignored.length === 0
      ? `Claude Code ends this frontmatter at the \`---\` on line ${claudeEndLine}, inside a value, and reads only the lines above it; Delegate reads the fields as Claude Code does${kept} — ${fix}`
      : `Claude Code ends this frontmatter at the \`---\` on line ${claudeEndLine}, inside a value, and reads only the lines above it, so Delegate reads the fields as Claude Code does and ignores ${nameKeys(ignored)} as the whole block up to line ${wholeEndLine} gives them${kept} — ${fix}`;
  return { agent, warnings: [{ ...where, reason }, ...claude.warnings] };
}
