import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type * as AgentDefsModule from '@delegate/agent-defs';
import type { AgentDiagnostic } from '@delegate/agent-defs';

type AgentDefs = typeof AgentDefsModule;

/** An agents folder and the folder its symbolic links may lead into. */
type ConfinedFolder = { path: string; confineTo: string };

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function isUnder(path: string, folder: string): boolean {
  return path === folder || path.startsWith(`${folder}${sep}`);
}

async function hasManifest(defs: AgentDefs, folder: string): Promise<boolean> {
  for (const manifest of defs.PLUGIN_MANIFEST_PATHS)
    if (await isFile(resolve(folder, manifest))) return true;
  return false;
}

// The plugin a path belongs to: the path itself when it holds a plugin manifest, else the
// nearest folder above an `agents` folder on the path that holds one (with `anyFolder`, the
// nearest folder above that holds one). A plugin's agents are read by Claude Code's plugin
// rules (a file without `name` is named after the file, …).
async function pluginOf(
  defs: AgentDefs,
  path: string,
  options: { anyFolder?: boolean } = {},
): Promise<string | undefined> {
  if (await hasManifest(defs, path)) return path;
  for (let folder = path; dirname(folder) !== folder; folder = dirname(folder)) {
    const above = dirname(folder);
    if ((options.anyFolder || basename(folder) === 'agents') && (await hasManifest(defs, above)))
      return above;
  }
  return undefined;
}

// The project agents folder (`<dir>/.claude/agents`, `<dir>/.delegate/agents`) a path is in,
// with the folder its files may lead to through symbolic links, as `delegate run` reads it.
async function projectAgentsFolderOf(
  defs: AgentDefs,
  path: string,
): Promise<ConfinedFolder | undefined> {
  for (let folder = path; dirname(folder) !== folder; folder = dirname(folder)) {
    const level = dirname(dirname(folder));
    const name = join(basename(dirname(folder)), basename(folder));
    if (!defs.AGENT_DIRECTORY_NAMES.includes(name)) continue;
    const found = (await defs.findProjectAgentDirectories(level)).find(
      (directory) => directory.path === folder,
    );
    return { path: folder, confineTo: found?.confineTo ?? level };
  }
  return undefined;
}

// The plugins a folder that is not itself one holds: its marketplace's plugin sources
// (`.claude-plugin/marketplace.json`) and its subfolders with a manifest.
async function pluginsIn(defs: AgentDefs, folder: string): Promise<string[]> {
  const found = new Set<string>();
  const marketplace = defs.readConfinedFile(resolve(folder, '.claude-plugin', 'marketplace.json'), {
    maxBytes: 1024 * 1024,
  });
  if (marketplace.ok) {
    try {
      const { plugins } = JSON.parse(marketplace.bytes.toString('utf8')) as { plugins?: unknown };
      for (const plugin of Array.isArray(plugins) ? plugins : []) {
        const source = (plugin as { source?: unknown } | null)?.source;
        if (typeof source !== 'string') continue;
        const path = resolve(folder, source);
        if (isUnder(path, folder) && path !== folder) found.add(path);
      }
    } catch {
      // Not JSON: its subfolders are still looked at.
    }
  }
  let entries: string[] = [];
  try {
    entries = (await readdir(folder, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => resolve(folder, entry.name));
  } catch {
    // Unreadable: nothing more to find.
  }
  for (const entry of entries) if (await hasManifest(defs, entry)) found.add(entry);
  return [...found].toSorted();
}

// A folder in or of a plugin: the asked-for folder's files, and the plugin's own problems (its
// manifest, an entry of its `agents`).
async function pluginFolderDiagnostics(
  defs: AgentDefs,
  folder: string,
  plugin: string,
): Promise<AgentDiagnostic[]> {
  const loaded = await defs.loadPluginAgents({ pluginDirs: [plugin] });
  const agentsFolder = resolve(plugin, 'agents');
  return loaded.diagnostics.filter(
    ({ filePath }) => isUnder(filePath, folder) || !isUnder(filePath, agentsFolder),
  );
}

// One file in a plugin, read as that plugin reads it: the plugin's diagnostics of the file and
// of its manifest, or a warning that the plugin does not load it at all.
async function pluginFileDiagnostics(
  defs: AgentDefs,
  file: string,
  plugin: string,
): Promise<AgentDiagnostic[]> {
  const [loaded, manifest] = await Promise.all([
    defs.loadPluginAgents({ pluginDirs: [plugin] }),
    defs.readPluginManifest(plugin),
  ]);
  const manifests = new Set(defs.PLUGIN_MANIFEST_PATHS.map((name) => resolve(plugin, name)));
  const own = loaded.diagnostics.filter(
    ({ filePath }) => filePath === file || filePath === plugin || manifests.has(filePath),
  );
  const loads =
    loaded.agents.some((agent) => agent.filePath === file) ||
    loaded.failed.some((failed) => failed.filePath === file) ||
    own.some(({ filePath }) => filePath === file);
  if (loads) return own;
  const reason =
    manifest.agents !== undefined && manifest.manifestPath !== undefined
      ? `not loaded: ${manifest.manifestPath} lists the plugin's agent files in \`agents\` and this file is not among them; as in Claude Code, only the files listed are read — add it to that list`
      : `not loaded: a plugin's agents are the files in its agents/ folder (${resolve(plugin, 'agents')}), or those its manifest lists in \`agents\`, and this file is neither`;
  return [
    ...own.filter(({ filePath }) => filePath !== file),
    { filePath: file, severity: 'warning', reason },
  ];
}

// One file of a project agents folder, read as `delegate run` reads that folder: a symbolic
// link leading out of the project is not read, with the same warning.
async function projectFileDiagnostics(
  defs: AgentDefs,
  file: string,
  folder: ConfinedFolder,
): Promise<AgentDiagnostic[]> {
  const loaded = await defs.loadAgentsFromDirectories({
    directories: [folder],
    source: 'projectSettings',
  });
  return loaded.diagnostics.filter(({ filePath }) => filePath === file);
}

async function pathDiagnostics(defs: AgentDefs, absolute: string): Promise<AgentDiagnostic[]> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(absolute)).isDirectory();
  } catch {
    return [{ filePath: absolute, severity: 'error', reason: 'no such file or folder' }];
  }
  // A project's agents folder first: the repository it is in may itself be a plugin.
  const project = await projectAgentsFolderOf(defs, isDirectory ? absolute : dirname(absolute));
  if (project !== undefined && !isDirectory) return projectFileDiagnostics(defs, absolute, project);
  if (project !== undefined) {
    const directories = [{ path: absolute, confineTo: project.confineTo }];
    return (await defs.loadAgentsFromDirectories({ directories, source: 'projectSettings' }))
      .diagnostics;
  }
  if (isDirectory) {
    const plugin = await pluginOf(defs, absolute);
    if (plugin !== undefined) return pluginFolderDiagnostics(defs, absolute, plugin);
    const plugins = await pluginsIn(defs, absolute);
    if (plugins.length > 0) {
      const each = await Promise.all(
        plugins.map((path) => pluginFolderDiagnostics(defs, path, path)),
      );
      return each.flat();
    }
    return (
      await defs.loadAgentsFromDirectories({
        directories: [absolute],
        source: 'projectSettings',
      })
    ).diagnostics;
  }
  const plugin = await pluginOf(defs, dirname(absolute), { anyFolder: true });
  if (plugin !== undefined) return pluginFileDiagnostics(defs, absolute, plugin);
  const result = await defs.readAgentFile({
    filePath: absolute,
    baseDir: dirname(absolute),
    source: 'projectSettings',
  });
  return result.ok ? result.warnings : [result.diagnostic];
}

/**
 * The diagnostics of the agent files and folders `paths` name, each read as `delegate run`
 * would read it: a file or folder of a project's `.claude/agents` (or `.delegate/agents`) as a
 * project folder, symbolic links out of the project skipped; a plugin, its `agents` folder or
 * any file in it by the plugin's rules (only the files its manifest lists, when it lists some);
 * a folder of plugins (a marketplace) as each of its plugins; any other path as a project
 * agents folder or file.
 */
export async function validatePaths(
  paths: readonly string[],
  cwd: string,
): Promise<AgentDiagnostic[]> {
  const defs = await import('@delegate/agent-defs');
  const diagnostics: AgentDiagnostic[] = [];
  for (const path of paths) diagnostics.push(...(await pathDiagnostics(defs, resolve(cwd, path))));
  return diagnostics;
}
