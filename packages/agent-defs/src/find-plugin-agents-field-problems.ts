import { quoteForDiagnostic } from './quote-for-diagnostic.js';

/** How each path in a plugin manifest's `agents` must start, as Claude Code 2.1.328 checks it. */
export const PLUGIN_AGENT_PATH_PREFIX = './';

/** How each path in a plugin manifest's `agents` must end: every entry names one agent file. */
export const PLUGIN_AGENT_PATH_SUFFIX = '.md';

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

function problemOf(entry: unknown, label: string): string | undefined {
  if (typeof entry !== 'string') return `${label} is ${describeValue(entry)}, not a path`;
  const starts = entry.startsWith(PLUGIN_AGENT_PATH_PREFIX);
  const ends = entry.endsWith(PLUGIN_AGENT_PATH_SUFFIX);
  if (starts && ends) return undefined;
  const quoted = `${label} ${quoteForDiagnostic(entry)}`;
  if (!starts && !ends) return `${quoted} neither starts with "./" nor ends in ".md"`;
  return starts ? `${quoted} does not end in ".md"` : `${quoted} does not start with "./"`;
}

/**
 * Checks a plugin manifest's `agents` value as Claude Code 2.1.328 does: one path or a list of
 * paths, each text that starts with `./` and ends in `.md` (case-sensitive), so a folder such as
 * `./agents` cannot be listed. Returns one description per entry that breaks the rules (`item 2
 * "./extra/" does not end in ".md"`), or none when the value keeps them. Claude Code refuses the
 * whole plugin when any entry breaks them.
 */
export function findPluginAgentsFieldProblems(agents: unknown): string[] {
  if (typeof agents === 'string') {
    const problem = problemOf(agents, 'the path');
    return problem === undefined ? [] : [problem];
  }
  if (!Array.isArray(agents))
    return [`it is ${describeValue(agents)}, not a path or a list of paths`];
  return agents.flatMap((entry: unknown, index) => {
    const problem = problemOf(entry, `item ${index + 1}`);
    return problem === undefined ? [] : [problem];
  });
}
