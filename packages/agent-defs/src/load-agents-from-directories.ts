import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { type AgentDefinition, type AgentSource } from '@delegate/core';
import {
  type AgentDiagnostic,
  type FailedAgentFile,
  type ParseAgentResult,
} from './agent-diagnostic.js';
import { createLimiter, type Limiter } from './create-limiter.js';
import { listMarkdownFiles } from './list-markdown-files.js';
import { readAgentFileSync } from './read-agent-file.js';

/** Default number of agent files read in one go before the event loop gets a turn. */
export const DEFAULT_READ_CONCURRENCY = 32;

/** One place agent files are read from, with its own limits. */
export type AgentFolder = {
  /** The agents folder, searched recursively; with `singleFile`, one `.md` file. */
  path: string;
  /** Directory its files may not resolve outside of through symbolic links; default the options' `confineTo`. */
  confineTo?: string;
  /** `path` is one agent file (a plugin manifest can name one); its folder is its `baseDir`. */
  singleFile?: boolean;
};

/** Input of {@link loadAgentsFromDirectories}. */
export type LoadAgentsFromDirectoriesOptions = {
  /** Agents directories (or {@link AgentFolder}s) that form one layer of one source, in load order. */
  directories: ReadonlyArray<string | AgentFolder>;
  /**
   * Read a file that two of the directories reach (the same real path) only the first time, as
   * Claude Code reads a plugin's agents. Default false.
   */
  readEachFileOnce?: boolean;
  /** Source the definitions belong to. */
  source: AgentSource;
  /** Plugin that supplied the directories; agent types become `plugin:name`. */
  plugin?: string;
  /** Directory that files may not resolve outside of through symbolic links (for repositories). */
  confineTo?: string;
  /**
   * Shared limiter: each batch of {@link DEFAULT_READ_CONCURRENCY} files is one task, so
   * several sources loading at once take turns. Default a new one.
   */
  limiter?: Limiter;
};

/** Definitions loaded from files, with every problem found. */
export type LoadedAgents = {
  /** Definitions in load order (a later one of the same type overrides an earlier one). */
  agents: AgentDefinition[];
  /** Problems, in load order. */
  diagnostics: AgentDiagnostic[];
  /** Agent files that did not load because of an error, in load order. */
  failed: FailedAgentFile[];
};

type Listed = { filePath: string; baseDir: string };

type Defined = { filePath: string; baseDir: string };

// Why the later of two folders of one source wins, and what Claude Code does instead.
function whyLaterFolderWins(later: string, agent: AgentDefinition, earlier: Defined): string {
  const sameLevel = dirname(dirname(agent.baseDir)) === dirname(dirname(earlier.baseDir));
  const delegateWins = isDelegateFolder(agent.baseDir) && !isDelegateFolder(earlier.baseDir);
  if (sameLevel && delegateWins)
    return `Delegate uses ${later} (a .delegate/agents file beats a .claude/agents file), while Claude Code reads only ${earlier.filePath}`;
  if (agent.source !== 'projectSettings')
    return `Delegate uses ${later} (its agents folder, ${agent.baseDir}, comes later in the search order)`;
  const claude = isDelegateFolder(agent.baseDir)
    ? `; Claude Code reads no .delegate/agents folder${isDelegateFolder(earlier.baseDir) ? '' : `, so it uses ${earlier.filePath}`}`
    : ', as Claude Code does';
  return `Delegate uses ${later}, because the project folder nearest the working directory wins (the main checkout's folders, read in a git worktree without its own, come lowest)${claude}`;
}

// Which of two files of one type Delegate uses, and why, and what Claude Code does instead.
function duplicateWarning(agent: AgentDefinition, earlier: Defined): AgentDiagnostic {
  const later = agent.filePath ?? agent.baseDir;
  const why =
    earlier.baseDir === agent.baseDir
      ? `Delegate uses ${later} (the later path in sorted order), while Claude Code uses whichever file its directory listing returns last, which depends on the file system`
      : whyLaterFolderWins(later, agent, earlier);
  return {
    filePath: later,
    agentType: agent.agentType,
    severity: 'warning',
    reason: `agent ${JSON.stringify(agent.agentType)} is defined both in ${earlier.filePath} and in ${later}; ${why} — rename one of them`,
  };
}

function isDelegateFolder(directory: string): boolean {
  return /[\\/]\.delegate[\\/]agents[\\/]?$/.test(directory);
}

function collect(
  results: ReadonlyArray<{ listed: Listed; result: ParseAgentResult }>,
  source: AgentSource,
  loaded: LoadedAgents,
): void {
  const fileByType = new Map<string, Defined>();
  for (const { listed, result } of results) {
    if (!result.ok) {
      loaded.diagnostics.push(result.diagnostic);
      if (result.diagnostic.severity === 'error') {
        loaded.failed.push({
          filePath: listed.filePath,
          source,
          ...(result.diagnostic.agentType === undefined
            ? {}
            : { agentType: result.diagnostic.agentType }),
          diagnostic: result.diagnostic,
        });
      }
      continue;
    }
    loaded.diagnostics.push(...result.warnings);
    const { agent } = result;
    const earlier = fileByType.get(agent.agentType);
    if (earlier !== undefined) loaded.diagnostics.push(duplicateWarning(agent, earlier));
    fileByType.set(agent.agentType, {
      filePath: agent.filePath ?? agent.baseDir,
      baseDir: agent.baseDir,
    });
    loaded.agents.push(agent);
  }
}

function realPathOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

// Every file to read, in load order: each folder's files sorted by path, folders in order.
function listFolders(
  options: LoadAgentsFromDirectoriesOptions,
  diagnostics: AgentDiagnostic[],
): Listed[] {
  const listed: Listed[] = [];
  const seen = new Set<string>();
  for (const entry of options.directories) {
    const folder = typeof entry === 'string' ? { path: entry } : entry;
    const confineTo = folder.confineTo ?? options.confineTo;
    const baseDir = folder.singleFile === true ? dirname(folder.path) : folder.path;
    const listing =
      folder.singleFile === true
        ? { files: [folder.path], diagnostics: [] }
        : listMarkdownFiles(folder.path, confineTo === undefined ? {} : { confineTo });
    diagnostics.push(...listing.diagnostics);
    for (const filePath of listing.files) {
      if (options.readEachFileOnce === true) {
        const real = realPathOrSelf(filePath);
        if (seen.has(real)) continue;
        seen.add(real);
      }
      listed.push({ filePath, baseDir });
    }
  }
  return listed;
}

/**
 * Loads every `.md` agent file under the given directories (recursively, sorted by path). A
 * bad file gets a diagnostic (and an entry in `failed`) and the others still load; a missing
 * directory is skipped. When two files define the same type, the later path wins and the
 * warning names both. Files are read in small synchronous batches with a turn for the event
 * loop between them: much faster than one promise per file, and no batch blocks for long
 * (a batch ends after 32 files or when the turn's {@link LOAD_SLICE_MS} slice is used up).
 */
export async function loadAgentsFromDirectories(
  options: LoadAgentsFromDirectoriesOptions,
): Promise<LoadedAgents> {
  const limiter = options.limiter ?? createLimiter(1);
  const loaded: LoadedAgents = { agents: [], diagnostics: [], failed: [] };
  const listed = listFolders(options, loaded.diagnostics);
  const results: Array<{ listed: Listed; result: ParseAgentResult }> = [];
  let next = 0;
  while (next < listed.length) {
    await limiter(async () => {
      // Up to 32 files while the event loop turn's slice lasts; none once another loader used
      // it up (a new slice starts each turn, so every loader gets on).
      const deadline = sliceDeadline();
      const end = Math.min(next + DEFAULT_READ_CONCURRENCY, listed.length);
      while (next < end && performance.now() < deadline) {
        const entry = listed[next] as Listed;
        next += 1;
        const result = readAgentFileSync({
          filePath: entry.filePath,
          baseDir: entry.baseDir,
          source: options.source,
          ...(options.plugin === undefined ? {} : { plugin: options.plugin }),
        });
        results.push({ listed: entry, result });
      }
    });
    if (next < listed.length) await yieldToEventLoop();
  }
  collect(results, options.source, loaded);
  return loaded;
}

/** Milliseconds of file reading and parsing one turn of the event loop gives all loaders together. */
export const LOAD_SLICE_MS = 8;

let sliceEndsAt: number | undefined;

/**
 * When the current slice of synchronous loading ends. Every loader in the process shares it
 * (all the project levels, the home folders and the plugins load at once): a slice starts
 * with the first batch of a turn of the event loop and ends {@link LOAD_SLICE_MS} later, so
 * loaders that resume in the same turn read nothing once it is used up instead of each
 * taking a full batch, and timers and I/O wait at most one slice plus one file.
 */
function sliceDeadline(): number {
  if (sliceEndsAt === undefined) {
    sliceEndsAt = performance.now() + LOAD_SLICE_MS;
    // Queued before the loaders' own turns: the next turn starts a new slice.
    setImmediate(() => (sliceEndsAt = undefined));
  }
  return sliceEndsAt;
}
