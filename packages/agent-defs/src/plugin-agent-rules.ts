import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { validateAgentName } from './validate-agent-name.js';

/**
 * Keys Claude Code ignores in a plugin's agent file: a plugin agent may not add hooks, start
 * MCP servers or change the permission mode (users copy the file into `.claude/agents` for that).
 */
export const PLUGIN_IGNORED_KEYS: readonly string[] = ['permissionMode', 'hooks', 'mcpServers'];

/** Where a plugin's agent file is: its plugin, its agents directory and its path. */
export type PluginAgentFile = {
  /** The plugin's name. */
  plugin: string;
  /** The plugin's agents directory. */
  baseDir: string;
  /** The file. */
  filePath: string;
};

// Folders between the agents directory and the file (`agents/review/deep.md` gives
// `['review']`); none when the file is not below the directory.
function subfolders(file: PluginAgentFile): string[] {
  const path = relative(file.baseDir, dirname(file.filePath));
  if (path === '' || isAbsolute(path) || path === '..' || path.startsWith(`..${sep}`)) return [];
  return path.split(sep).filter((segment) => segment !== '' && segment !== '.');
}

/**
 * Why `segment` cannot be one part of a plugin agent type (`plugin:folder:name`), or
 * `undefined` when it can: the rules of {@link validateAgentName} (no `:`, no control or
 * invisible characters, not reserved, …), and not blank, since a folder named with spaces
 * alone would show as nothing between two colons.
 */
export function validateTypeSegment(segment: string): string | undefined {
  if (segment.length > 0 && segment.trim().length === 0) return 'is blank (only spaces)';
  return validateAgentName(segment);
}

/** A folder between a plugin's agents directory and a file that cannot join the agent type. */
export type PluginFolderProblem = {
  /** The folder, as a path. */
  folder: string;
  /** Its name. */
  name: string;
  /** Why it cannot be part of a type. */
  problem: string;
};

/**
 * The first folder between the agents directory and the file whose name cannot be part of
 * the agent type (see {@link validateTypeSegment}), or `undefined` when every one can. Without
 * this check a folder named `a:b` would give the same type as the folders `a/b`, and a folder
 * holding a line break or a direction override would put it into the type.
 */
export function findPluginFolderProblem(file: PluginAgentFile): PluginFolderProblem | undefined {
  let folder = file.baseDir;
  for (const name of subfolders(file)) {
    folder = join(folder, name);
    const problem = validateTypeSegment(name);
    if (problem !== undefined) return { folder, name, problem };
  }
  return undefined;
}

/**
 * The agent type of a plugin's agent, as Claude Code builds it: the plugin, each folder
 * between the agents directory and the file, and the name, joined by `:`
 * (`acme:review:deep`).
 */
export function pluginAgentType(file: PluginAgentFile, name: string): string {
  return [file.plugin, ...subfolders(file), name].join(':');
}

/** The name Claude Code gives a plugin's agent file that sets none: its file name without `.md`. */
export function pluginFileAgentName(filePath: string): string {
  return basename(filePath).replace(/\.md$/, '');
}

/** The description Claude Code gives a plugin's agent that has none. */
export function pluginFallbackDescription(plugin: string): string {
  return `Agent from ${plugin} plugin`;
}
