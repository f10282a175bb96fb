import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';
import { type AgentFolder } from './load-agents-from-directories.js';
import { findPluginAgentsFieldProblems } from './find-plugin-agents-field-problems.js';
import { quoteForDiagnostic } from './quote-for-diagnostic.js';

/** Input of {@link resolvePluginAgentPaths}. */
export type PluginAgentPathsOptions = {
  /** The plugin's root folder. */
  pluginDir: string;
  /** The manifest the paths come from, named in every diagnostic. */
  manifestPath: string;
  /** The manifest's `agents` value: a path or a list of paths, relative to the plugin root. */
  agents: unknown;
  /** The plugin's name, for the error when its `agents` is refused. */
  plugin?: string;
};

/** The files a manifest lists as a plugin's agents (in place of `agents/`), with the paths refused. */
export type PluginAgentPaths = {
  /** Single `.md` files (or folders whose name ends in `.md`), in the manifest's order. */
  folders: AgentFolder[];
  /**
   * An error when the value breaks Claude Code's rules (no agent of the plugin loads), else
   * one warning per path refused or missing, naming the manifest and the path.
   */
  diagnostics: AgentDiagnostic[];
  /** True when the value breaks Claude Code's rules, so that none of the plugin's agents load. */
  refused: boolean;
};

function isInside(root: string, path: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot));
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

// One manifest entry (text starting with `./` and ending in `.md`): what it names, or why it
// is not read.
function resolveEntry(pluginDir: string, entry: string): AgentFolder | string {
  const quoted = quoteForDiagnostic(entry);
  const path = resolve(pluginDir, entry);
  const refused = (how: string): string =>
    `${quoted} ${how}, outside the plugin folder ${pluginDir}, so it was not read; a plugin's agents must be inside it`;
  if (!isInside(resolve(pluginDir), path)) return refused(`leads to ${path}`);
  const real = realPath(path);
  if (real === undefined)
    return `${quoted} does not exist (${path}), so no agents were read from it`;
  if (!isInside(realPath(pluginDir) ?? resolve(pluginDir), real))
    return refused(`leads through a symbolic link to ${real}`);
  const stats = statSync(real);
  // Claude Code reads a folder whose name ends in `.md` like `agents/`.
  if (stats.isDirectory()) return { path };
  if (stats.isFile()) return { path, singleFile: true };
  return `${quoted} is neither a file nor a folder, so no agents were read from it`;
}

/** Most entries one refusal names; the rest are counted. */
const MAX_PROBLEMS_NAMED = 5;

function refusal(options: PluginAgentPathsOptions, problems: readonly string[]): AgentDiagnostic {
  const shown = problems.slice(0, MAX_PROBLEMS_NAMED);
  const more = problems.length - shown.length;
  const whose = options.plugin === undefined ? 'the plugin' : quoteForDiagnostic(options.plugin);
  return {
    filePath: options.manifestPath,
    severity: 'error',
    reason: `\`agents\` must list agent files, each a path that starts with "./" and ends in ".md", as Claude Code requires: ${shown.join('; ')}${more > 0 ? `, and ${more} more` : ''}; Claude Code refuses the whole plugin, so none of ${whose}'s agents were loaded — list each agent file ("./agents/reviewer.md"), or remove \`agents\` so the agents/ folder is read`,
  };
}

/**
 * Resolves a plugin manifest's `agents` value, which, as in Claude Code 2.1.328, replaces the
 * default `agents/` folder: one path or a list of paths relative to the plugin root, each
 * starting with `./` and ending in `.md`. When any entry breaks those rules (a folder such as
 * `./agents`, a path without `./`, a number), Claude Code refuses the whole plugin: the result
 * is `refused`, with one error naming the manifest and each bad entry. Otherwise a path that
 * leaves the plugin folder (`./../`, a symbolic link out) is refused, and one that does not
 * exist is skipped, each with a warning naming the manifest and the path; the others load.
 */
export function resolvePluginAgentPaths(options: PluginAgentPathsOptions): PluginAgentPaths {
  const { pluginDir, manifestPath, agents } = options;
  const problems = findPluginAgentsFieldProblems(agents);
  if (problems.length > 0)
    return { folders: [], diagnostics: [refusal(options, problems)], refused: true };
  const result: PluginAgentPaths = { folders: [], diagnostics: [], refused: false };
  const entries = (Array.isArray(agents) ? agents : [agents]) as string[];
  if (entries.length === 0) {
    result.diagnostics.push({
      filePath: manifestPath,
      severity: 'warning',
      reason:
        '`agents` is an empty list, so no agents were loaded from this plugin (as in Claude Code, the files it lists replace the agents/ folder); list the agent files, or remove `agents` so the agents/ folder is read',
    });
  }
  entries.forEach((entry, index) => {
    const resolved = resolveEntry(pluginDir, entry);
    if (typeof resolved !== 'string') result.folders.push(resolved);
    else
      result.diagnostics.push({
        filePath: manifestPath,
        severity: 'warning',
        reason: `\`agents\`${Array.isArray(agents) ? ` item ${index + 1}` : ''}: ${resolved}`,
      });
  });
  return result;
}
