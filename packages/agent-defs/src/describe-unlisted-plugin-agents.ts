import { realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';
import { listMarkdownFiles } from './list-markdown-files.js';
import { type AgentFolder } from './load-agents-from-directories.js';
import { quoteForDiagnostic } from './quote-for-diagnostic.js';

/** Input of {@link describeUnlistedPluginAgents}. */
export type UnlistedPluginAgentsOptions = {
  /** The plugin's root folder. */
  pluginDir: string;
  /** The manifest whose `agents` lists the plugin's agent files. */
  manifestPath: string;
  /** What the manifest's `agents` resolved to (see `resolvePluginAgentPaths`). */
  folders: readonly AgentFolder[];
};

function realPathOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

function filesOf(folder: AgentFolder): string[] {
  return folder.singleFile === true ? [folder.path] : listMarkdownFiles(folder.path).files;
}

/**
 * A warning on a plugin's `agents/` folder when its manifest lists `agents` but not every
 * `.md` file in that folder: as in Claude Code 2.1.328, the files listed replace the folder, so
 * the others are not loaded. Names the first such file and how many there are; `undefined`
 * when the folder is missing or every file in it is listed.
 */
export function describeUnlistedPluginAgents(
  options: UnlistedPluginAgentsOptions,
): AgentDiagnostic | undefined {
  const agentsFolder = join(options.pluginDir, 'agents');
  const listed = new Set(options.folders.flatMap(filesOf).map(realPathOrSelf));
  const unlisted = listMarkdownFiles(agentsFolder).files.filter(
    (file) => !listed.has(realPathOrSelf(file)),
  );
  const first = unlisted[0];
  if (first === undefined) return undefined;
  const named = quoteForDiagnostic(relative(agentsFolder, first));
  const which =
    unlisted.length === 1
      ? `the agent file ${named} here is not loaded`
      : `${unlisted.length} agent files here (${named}, …) are not loaded`;
  return {
    filePath: agentsFolder,
    severity: 'warning',
    reason: `${which}: ${options.manifestPath} lists the plugin's agent files in \`agents\`, and, as in Claude Code, those replace the agents/ folder; add the files to that list, or remove \`agents\` so this folder is read`,
  };
}
