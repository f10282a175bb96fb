import { basename, dirname, isAbsolute, relative, sep } from 'node:path';

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
