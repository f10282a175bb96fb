import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { DelegateError, type AgentDefinitionsResult } from '@delegate/core';
import { type AgentDiagnostic, type FailedAgentFile } from './agent-diagnostic.js';
import { createLimiter } from './create-limiter.js';
import { describeAgentOverrides } from './describe-agent-overrides.js';
import { AGENT_DIRECTORY_NAMES } from './agent-directory-names.js';
import { findProjectAgentDirectories } from './find-project-roots.js';
import { getActiveAgentsFromList } from './get-active-agents-from-list.js';
import { getBuiltInAgents } from './get-built-in-agents.js';
import { loadFlagAgents } from './load-flag-agents.js';
import {
  DEFAULT_READ_CONCURRENCY,
  loadAgentsFromDirectories,
} from './load-agents-from-directories.js';
import { loadPluginAgents } from './load-plugin-agents.js';

/** Options of {@link getAgentDefinitionsWithOverrides}. */
export type AgentDefinitionsOptions = {
  /**
   * Working directory; project agents are searched from here up to the repository root (or,
   * outside a repository, up to the file-system root), never in the home directory.
   */
  cwd: string;
  /** Home directory for user agents; default `os.homedir()`. */
  homeDir?: string;
  /** The `--agents` value: an object `{ name: { description, prompt, … } }` or its JSON text. */
  flagAgents?: unknown;
  /** Managed directory of agent files (highest precedence). */
  policyDir?: string;
  /** Plugin directories, each with an `agents/` folder. */
  pluginDirs?: readonly string[];
  /** Model of the built-in Explore agent; default `haiku`. */
  exploreModel?: string;
  /** Most files read at the same time; default 32. Not part of the cache key. */
  concurrency?: number;
};

/** Every agent that exists for a working directory, after precedence, with the problems found. */
export type AgentDefinitionsLoadResult = AgentDefinitionsResult & {
  /** Problems with files and values, in load order; `info` entries are notes. */
  diagnostics: AgentDiagnostic[];
  /**
   * Agent files (and `--agents` entries) that did not load because of an error, each with the
   * agent type it would have defined when its `name` could be read. Pass it to
   * {@link explainUnknownAgentType} when a requested type is not among `activeAgents`.
   */
  failedAgents: FailedAgentFile[];
};

type CacheEntry = { cwd: string; result: Promise<AgentDefinitionsLoadResult> };
const cache = new Map<string, CacheEntry>();

function cacheKey(
  cwd: string,
  homeDir: string,
  options: AgentDefinitionsOptions,
): string | undefined {
  try {
    return JSON.stringify([
      cwd,
      homeDir,
      options.policyDir === undefined ? null : resolve(options.policyDir),
      (options.pluginDirs ?? []).map((directory) => resolve(directory)),
      options.exploreModel ?? null,
      options.flagAgents ?? null,
    ]);
  } catch {
    return undefined; // A value JSON cannot hold (a cycle, a bigint) is loaded without caching.
  }
}

/** The home directory when none can be used: `os.homedir()` gave an empty or relative path. */
const NO_HOME = '';

const NO_HOME_DIAGNOSTIC: AgentDiagnostic = {
  filePath: '~/.claude/agents',
  severity: 'warning',
  reason:
    'the home directory is not known (HOME is empty or not an absolute path), so no user agents were loaded; set HOME, or pass homeDir',
};

// An empty HOME makes `os.homedir()` return '', which would make the working directory the
// home: the project's own agent files would then load as the user's, trusted.
function homeDirectoryOf(options: AgentDefinitionsOptions): string {
  if (options.homeDir !== undefined) return resolve(options.homeDir);
  const home = homedir();
  return isAbsolute(home) ? resolve(home) : NO_HOME;
}

function realPathOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

async function load(
  cwd: string,
  homeDir: string,
  options: AgentDefinitionsOptions,
): Promise<AgentDefinitionsLoadResult> {
  const limiter = createLimiter(options.concurrency ?? DEFAULT_READ_CONCURRENCY);
  const userDirectories =
    homeDir === NO_HOME ? [] : AGENT_DIRECTORY_NAMES.map((name) => join(homeDir, name));
  // A home directory inside the repository (also through a symbolic link) would otherwise
  // load user agents twice, the project's copy winning.
  const userReal = new Set(userDirectories.map(realPathOrSelf));
  const projectDirectories = (
    await findProjectAgentDirectories(cwd, homeDir === NO_HOME ? {} : { homeDir })
  ).filter((directory) => !userReal.has(realPathOrSelf(directory.path)));

  const [plugins, user, policy, project] = await Promise.all([
    loadPluginAgents({ pluginDirs: options.pluginDirs ?? [], limiter }),
    loadAgentsFromDirectories({ directories: userDirectories, source: 'userSettings', limiter }),
    loadAgentsFromDirectories({
      directories: options.policyDir === undefined ? [] : [resolve(options.policyDir)],
      source: 'policySettings',
      limiter,
    }),
    // One layer, read farthest folder first (the main checkout's, in a worktree without its
    // own, before all): as in Claude Code, the folder nearest cwd wins, and each tie gets a
    // warning naming both files. A cloned repository may hold symbolic links to files
    // elsewhere; those are not read.
    loadAgentsFromDirectories({
      directories: projectDirectories,
      source: 'projectSettings',
      limiter,
    }),
  ]);
  const flag = loadFlagAgents({ flagAgents: options.flagAgents, baseDir: cwd });

  if (homeDir === NO_HOME) user.diagnostics.unshift(NO_HOME_DIAGNOSTIC);
  const ordered = [plugins, user, project, flag, policy];
  const allAgents = [
    ...getBuiltInAgents(
      options.exploreModel === undefined ? {} : { exploreModel: options.exploreModel },
    ),
    ...ordered.flatMap((loaded) => loaded.agents),
  ];
  const activeAgents = getActiveAgentsFromList(allAgents);
  return {
    activeAgents,
    allAgents,
    failedAgents: ordered.flatMap((loaded) => loaded.failed),
    diagnostics: [
      ...ordered.flatMap((loaded) => loaded.diagnostics),
      ...describeAgentOverrides(allAgents, activeAgents),
    ],
  };
}

/**
 * Loads every agent definition for a working directory: built-ins < plugins < user
 * (`~/.claude/agents`, `~/.delegate/agents`) < project (`.claude/agents`, `.delegate/agents`
 * in each directory from `cwd` up to the repository root, the nearest to `cwd` winning, as in
 * Claude Code) < `--agents` JSON < policy directory. A higher source overrides a lower one of the
 * same type; `allAgents` keeps them all. Results are memoized per cwd and options until
 * {@link clearAgentDefinitionsCache} is called.
 */
export async function getAgentDefinitionsWithOverrides(
  options: AgentDefinitionsOptions,
): Promise<AgentDefinitionsLoadResult> {
  if (typeof options.cwd !== 'string' || options.cwd.length === 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      'getAgentDefinitionsWithOverrides needs a `cwd` (the working directory to load project agents for)',
    );
  }
  const cwd = resolve(options.cwd);
  const homeDir = homeDirectoryOf(options);
  const key = cacheKey(cwd, homeDir, options);
  let entry = key === undefined ? undefined : cache.get(key);
  if (entry === undefined) {
    const result = load(cwd, homeDir, options);
    entry = { cwd, result };
    if (key !== undefined) {
      cache.set(key, entry);
      // A failed load must not stay cached; the next call retries.
      result.catch(() => cache.delete(key));
    }
  }
  const result = await entry.result;
  return {
    ...result,
    activeAgents: [...result.activeAgents],
    allAgents: [...result.allAgents],
    diagnostics: [...result.diagnostics],
    failedAgents: [...result.failedAgents],
  };
}

/** Forgets memoized definitions: those of one working directory, or all when `cwd` is omitted. */
export function clearAgentDefinitionsCache(cwd?: string): void {
  if (cwd === undefined) {
    cache.clear();
    return;
  }
  const target = resolve(cwd);
  for (const [key, entry] of cache) {
    if (entry.cwd === target) cache.delete(key);
  }
}
