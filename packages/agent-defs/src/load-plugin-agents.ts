import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';
import { createLimiter, type Limiter } from './create-limiter.js';
import {
  DEFAULT_READ_CONCURRENCY,
  loadAgentsFromDirectories,
  type LoadedAgents,
} from './load-agents-from-directories.js';
import { validateAgentName } from './validate-agent-name.js';

/** Manifest files that may name a plugin, checked in this order. */
export const PLUGIN_MANIFEST_PATHS: readonly string[] = [
  join('.claude-plugin', 'plugin.json'),
  'plugin.json',
];

/** A plugin's name, with a note when its manifest could not be used. */
export type PluginName = {
  /** Name used as the agent-type prefix. */
  name: string;
  /** Problems with the manifest. */
  diagnostics: AgentDiagnostic[];
};

function nameProblem(name: string): string | undefined {
  return name.includes(':') ? "contains ':'" : validateAgentName(name);
}

/** Reads a plugin's name from its manifest (`.claude-plugin/plugin.json`, then `plugin.json`), else its directory name. */
export async function readPluginName(pluginDir: string): Promise<PluginName> {
  const diagnostics: AgentDiagnostic[] = [];
  for (const manifest of PLUGIN_MANIFEST_PATHS) {
    const filePath = join(pluginDir, manifest);
    let text: string;
    try {
      text = await readFile(filePath, 'utf8');
    } catch {
      continue;
    }
    try {
      const parsed: unknown = JSON.parse(text);
      const name = (parsed as { name?: unknown } | null)?.name;
      if (typeof name === 'string' && nameProblem(name.trim()) === undefined)
        return { name: name.trim(), diagnostics };
      diagnostics.push({
        filePath,
        severity: 'warning',
        reason: `plugin manifest has no usable "name" (${typeof name === 'string' ? `${JSON.stringify(name)} ${nameProblem(name.trim()) ?? ''}` : 'missing'}); using the directory name`,
      });
    } catch (error) {
      diagnostics.push({
        filePath,
        severity: 'warning',
        reason: `plugin manifest is not valid JSON (${error instanceof Error ? error.message : String(error)}); using the directory name`,
      });
    }
    break;
  }
  return { name: basename(resolve(pluginDir)), diagnostics };
}

/** Input of {@link loadPluginAgents}. */
export type LoadPluginAgentsOptions = {
  /** Plugin directories, each with an `agents/` folder. */
  pluginDirs: readonly string[];
  /** Shared limiter for file reads. */
  limiter?: Limiter;
};

/**
 * Loads the agents of each plugin from `<pluginDir>/agents/**.md`, in the order given. Agent
 * types are namespaced as `plugin:name`, so a plugin cannot silently replace a built-in or
 * another plugin's agent.
 */
export async function loadPluginAgents(options: LoadPluginAgentsOptions): Promise<LoadedAgents> {
  const limiter = options.limiter ?? createLimiter(DEFAULT_READ_CONCURRENCY);
  const results = await Promise.all(
    options.pluginDirs.map(async (pluginDir): Promise<LoadedAgents> => {
      const plugin = await readPluginName(pluginDir);
      const problem = nameProblem(plugin.name);
      if (problem !== undefined) {
        return {
          agents: [],
          diagnostics: [
            ...plugin.diagnostics,
            {
              filePath: pluginDir,
              severity: 'error',
              reason: `plugin name ${JSON.stringify(plugin.name)} ${problem}; set "name" in its plugin.json`,
            },
          ],
        };
      }
      const loaded = await loadAgentsFromDirectories({
        directories: [join(pluginDir, 'agents')],
        source: 'plugin',
        plugin: plugin.name,
        limiter,
      });
      return { agents: loaded.agents, diagnostics: [...plugin.diagnostics, ...loaded.diagnostics] };
    }),
  );
  return {
    agents: results.flatMap((result) => result.agents),
    diagnostics: results.flatMap((result) => result.diagnostics),
  };
}
