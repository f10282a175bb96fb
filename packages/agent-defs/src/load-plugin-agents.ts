import { basename, join, resolve } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';
import { createLimiter, type Limiter } from './create-limiter.js';
import { describeUnlistedPluginAgents } from './describe-unlisted-plugin-agents.js';
import {
  DEFAULT_READ_CONCURRENCY,
  loadAgentsFromDirectories,
  type LoadedAgents,
} from './load-agents-from-directories.js';
import { validateTypeSegment } from './plugin-agent-rules.js';
import { quoteForDiagnostic } from './quote-for-diagnostic.js';
import { readConfinedFile } from './read-confined-file.js';
import { resolvePluginAgentPaths, type PluginAgentPaths } from './resolve-plugin-agent-paths.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';

/** Largest plugin manifest read (64 KiB); a bigger one is ignored with a warning. */
export const MAX_PLUGIN_MANIFEST_BYTES = 64 * 1024;

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
  return validateTypeSegment(name);
}

function parseManifest(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** What a plugin's manifest says, as far as its agents go. */
export type PluginManifest = PluginName & {
  /** The manifest read, when one was found and parsed. */
  manifestPath?: string;
  /** The manifest's `agents` value as written (a path or a list of paths), when it has one. */
  agents?: unknown;
};

/**
 * Reads a plugin's manifest (`.claude-plugin/plugin.json`, then `plugin.json`): its name (else
 * the directory name) and its `agents` paths, which replace the `agents/` folder. The manifest
 * goes through the confined reader: a FIFO, a device or a file over
 * {@link MAX_PLUGIN_MANIFEST_BYTES} is skipped with a warning, never read.
 */
export async function readPluginManifest(pluginDir: string): Promise<PluginManifest> {
  const diagnostics: AgentDiagnostic[] = [];
  const fallback = basename(resolve(pluginDir));
  for (const manifest of PLUGIN_MANIFEST_PATHS) {
    const filePath = join(pluginDir, manifest);
    const read = readConfinedFile(filePath, { maxBytes: MAX_PLUGIN_MANIFEST_BYTES });
    if (!read.ok) {
      if (read.code === 'missing') continue;
      diagnostics.push({
        filePath,
        severity: 'warning',
        reason: `plugin manifest ${read.reason}; it was not read, so the directory name is used`,
      });
      break;
    }
    const parsed = parseManifest(read.bytes.toString('utf8'));
    if (!parsed.ok) {
      diagnostics.push({
        filePath,
        severity: 'warning',
        reason: 'plugin manifest is not valid JSON; using the directory name',
      });
      break;
    }
    const { name, agents } = (parsed.value ?? {}) as { name?: unknown; agents?: unknown };
    const found = { manifestPath: filePath, ...(agents === undefined ? {} : { agents }) };
    if (typeof name === 'string' && nameProblem(name.trim()) === undefined)
      return { name: name.trim(), diagnostics, ...found };
    diagnostics.push({
      filePath,
      severity: 'warning',
      reason: `plugin manifest has no usable "name" (${typeof name === 'string' ? `${JSON.stringify(truncateForDiagnostic(name))} ${nameProblem(name.trim()) ?? ''}` : 'missing'}); using the directory name`,
    });
    return { name: fallback, diagnostics, ...found };
  }
  return { name: fallback, diagnostics };
}

/**
 * Reads a plugin's name from its manifest (`.claude-plugin/plugin.json`, then `plugin.json`),
 * else its directory name. The manifest goes through the confined reader: a FIFO, a device or
 * a file over {@link MAX_PLUGIN_MANIFEST_BYTES} is skipped with a warning, never read.
 */
export async function readPluginName(pluginDir: string): Promise<PluginName> {
  const { name, diagnostics } = await readPluginManifest(pluginDir);
  return { name, diagnostics };
}

// The files the manifest lists in place of `agents/` (none when it refuses them), with a
// warning on `agents/` files left out; `undefined` when the manifest lists none.
function listedAgentFiles(pluginDir: string, plugin: PluginManifest): PluginAgentPaths | undefined {
  if (plugin.manifestPath === undefined || plugin.agents === undefined) return undefined;
  const manifestPath = plugin.manifestPath;
  const listed = resolvePluginAgentPaths({
    pluginDir,
    manifestPath,
    agents: plugin.agents,
    plugin: plugin.name,
  });
  // A refused or empty list has its own diagnostic, which says the agents/ folder is not read.
  const empty = Array.isArray(plugin.agents) && plugin.agents.length === 0;
  if (listed.refused || empty) return listed;
  const unlisted = describeUnlistedPluginAgents({
    pluginDir,
    manifestPath,
    folders: listed.folders,
  });
  return unlisted === undefined
    ? listed
    : { ...listed, diagnostics: [...listed.diagnostics, unlisted] };
}

/** Input of {@link loadPluginAgents}. */
export type LoadPluginAgentsOptions = {
  /** Plugin directories, each with an `agents/` folder (or a manifest listing its agent files). */
  pluginDirs: readonly string[];
  /** Shared limiter for file reads. */
  limiter?: Limiter;
};

/**
 * Loads the agents of each plugin, in the order given: `<pluginDir>/agents/**.md`, or, when its
 * manifest has `agents`, only the `.md` files that lists (as in Claude Code 2.1.328; see
 * {@link resolvePluginAgentPaths}), each file once. A manifest whose `agents` breaks Claude
 * Code's rules (a folder such as `./agents` listed) loads none of that plugin's agents, with an
 * error naming the manifest and the entry; other plugins still load. Agent types are
 * namespaced as `plugin:name`, so a plugin cannot silently replace a built-in or another
 * plugin's agent.
 */
export async function loadPluginAgents(options: LoadPluginAgentsOptions): Promise<LoadedAgents> {
  const limiter = options.limiter ?? createLimiter(DEFAULT_READ_CONCURRENCY);
  const results = await Promise.all(
    options.pluginDirs.map(async (pluginDir): Promise<LoadedAgents> => {
      const plugin = await readPluginManifest(pluginDir);
      const problem = nameProblem(plugin.name);
      if (problem !== undefined) {
        return {
          agents: [],
          failed: [],
          diagnostics: [
            ...plugin.diagnostics,
            {
              filePath: pluginDir,
              severity: 'error',
              reason: `plugin name ${quoteForDiagnostic(plugin.name)} ${problem}; set "name" in its plugin.json`,
            },
          ],
        };
      }
      const listed = listedAgentFiles(pluginDir, plugin);
      const loaded = await loadAgentsFromDirectories({
        directories: listed?.folders ?? [join(pluginDir, 'agents')],
        source: 'plugin',
        plugin: plugin.name,
        readEachFileOnce: true,
        limiter,
      });
      return {
        agents: loaded.agents,
        diagnostics: [...plugin.diagnostics, ...(listed?.diagnostics ?? []), ...loaded.diagnostics],
        failed: loaded.failed,
      };
    }),
  );
  return {
    agents: results.flatMap((result) => result.agents),
    diagnostics: results.flatMap((result) => result.diagnostics),
    failed: results.flatMap((result) => result.failed),
  };
}
