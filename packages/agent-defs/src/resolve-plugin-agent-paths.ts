import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';
import { type AgentFolder } from './load-agents-from-directories.js';
import { quoteForDiagnostic } from './quote-for-diagnostic.js';

/** Input of {@link resolvePluginAgentPaths}. */
export type PluginAgentPathsOptions = {
  /** The plugin's root folder. */
  pluginDir: string;
  /** The manifest the paths come from, named in every diagnostic. */
  manifestPath: string;
  /** The manifest's `agents` value: a path or a list of paths, relative to the plugin root. */
  agents: unknown;
};

/** The folders and files a manifest adds to a plugin's agents, with the paths refused. */
export type PluginAgentPaths = {
  /** Folders (searched like `agents/`) and single `.md` files, in the manifest's order. */
  folders: AgentFolder[];
  /** One warning per path refused or missing, naming the manifest and the path. */
  diagnostics: AgentDiagnostic[];
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

function describeEntry(entry: unknown): string {
  if (typeof entry === 'string') return 'an empty path';
  if (entry === null) return 'not a path (null)';
  return `not a path (${Array.isArray(entry) ? 'a list' : typeof entry})`;
}

// One manifest entry: the folder or file it names, or why it is not read.
function resolveEntry(pluginDir: string, entry: unknown): AgentFolder | string {
  if (typeof entry !== 'string' || entry.trim() === '')
    return `${describeEntry(entry)}, so it was ignored; write a path relative to the plugin folder, such as "./specialists/"`;
  const quoted = quoteForDiagnostic(entry);
  const refused = (how: string): string =>
    `${quoted} ${how}, outside the plugin folder ${pluginDir}, so it was not read; a plugin's agents must be inside it`;
  if (isAbsolute(entry)) return refused('is an absolute path');
  const path = resolve(pluginDir, entry);
  if (!isInside(resolve(pluginDir), path)) return refused(`leads to ${path}`);
  const real = realPath(path);
  if (real === undefined)
    return `${quoted} does not exist (${path}), so no agents were read from it`;
  if (!isInside(realPath(pluginDir) ?? resolve(pluginDir), real))
    return refused(`leads through a symbolic link to ${real}`);
  const stats = statSync(real);
  if (stats.isDirectory()) return { path };
  if (stats.isFile() && path.endsWith('.md')) return { path, singleFile: true };
  return `${quoted} is neither a folder nor a file ending in .md, so no agents were read from it`;
}

/**
 * Resolves a plugin manifest's `agents` value (one path or a list, relative to the plugin
 * root: folders searched like `agents/`, or single `.md` files), which adds to the default
 * `agents/` folder as in Claude Code. A path that leaves the plugin folder (`../`, an
 * absolute path, a symbolic link out) is refused, and one that does not exist is skipped, each
 * with a warning naming the manifest and the path; the other paths still load.
 */
export function resolvePluginAgentPaths(options: PluginAgentPathsOptions): PluginAgentPaths {
  const { pluginDir, manifestPath, agents } = options;
  const result: PluginAgentPaths = { folders: [], diagnostics: [] };
  const warn = (reason: string): void => {
    result.diagnostics.push({ filePath: manifestPath, severity: 'warning', reason });
  };
  if (typeof agents !== 'string' && !Array.isArray(agents)) {
    warn(
      '`agents` must be a path or a list of paths relative to the plugin folder; it was ignored, so only the agents/ folder was read',
    );
    return result;
  }
  const entries: unknown[] = Array.isArray(agents) ? agents : [agents];
  entries.forEach((entry, index) => {
    const resolved = resolveEntry(pluginDir, entry);
    if (typeof resolved !== 'string') result.folders.push(resolved);
    else warn(`\`agents\`${Array.isArray(agents) ? ` item ${index + 1}` : ''}: ${resolved}`);
  });
  return result;
}
