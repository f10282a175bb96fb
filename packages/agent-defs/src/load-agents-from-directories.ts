import { type AgentDefinition, type AgentSource } from '@delegate/core';
import { type AgentDiagnostic, type ParseAgentResult } from './agent-diagnostic.js';
import { createLimiter, type Limiter } from './create-limiter.js';
import { listMarkdownFiles } from './list-markdown-files.js';
import { readAgentFile } from './read-agent-file.js';

/** Default number of agent files read at the same time. */
export const DEFAULT_READ_CONCURRENCY = 32;

/** Input of {@link loadAgentsFromDirectories}. */
export type LoadAgentsFromDirectoriesOptions = {
  /** Agents directories that form one layer of one source, in load order. */
  directories: readonly string[];
  /** Source the definitions belong to. */
  source: AgentSource;
  /** Plugin that supplied the directories; agent types become `plugin:name`. */
  plugin?: string;
  /** Directory that files may not resolve outside of through symbolic links (for repositories). */
  confineTo?: string;
  /** Shared limiter for file reads; default a new one with {@link DEFAULT_READ_CONCURRENCY}. */
  limiter?: Limiter;
};

/** Definitions loaded from files, with every problem found. */
export type LoadedAgents = {
  /** Definitions in load order (a later one of the same type overrides an earlier one). */
  agents: AgentDefinition[];
  /** Problems, in load order. */
  diagnostics: AgentDiagnostic[];
};

/**
 * Loads every `.md` agent file under the given directories (recursively, sorted, reads
 * bounded by the limiter). A bad file gets a diagnostic and the others still load; a
 * missing directory is skipped. When two files define the same type, the later one wins
 * and gets a warning naming the other.
 */
export async function loadAgentsFromDirectories(
  options: LoadAgentsFromDirectoriesOptions,
): Promise<LoadedAgents> {
  const limiter = options.limiter ?? createLimiter(DEFAULT_READ_CONCURRENCY);
  const listings = await Promise.all(
    options.directories.map((directory) =>
      listMarkdownFiles(
        directory,
        options.confineTo === undefined ? {} : { confineTo: options.confineTo },
      ),
    ),
  );
  const diagnostics: AgentDiagnostic[] = [];
  const reads: Array<Promise<ParseAgentResult>> = [];
  options.directories.forEach((directory, index) => {
    const listing = listings[index];
    if (listing === undefined) return;
    diagnostics.push(...listing.diagnostics);
    for (const filePath of listing.files) {
      reads.push(
        limiter(() =>
          readAgentFile({
            filePath,
            baseDir: directory,
            source: options.source,
            ...(options.plugin === undefined ? {} : { plugin: options.plugin }),
          }),
        ),
      );
    }
  });

  const agents: AgentDefinition[] = [];
  const firstFileByType = new Map<string, string>();
  for (const result of await Promise.all(reads)) {
    if (!result.ok) {
      diagnostics.push(result.diagnostic);
      continue;
    }
    diagnostics.push(...result.warnings);
    const { agent } = result;
    const earlier = firstFileByType.get(agent.agentType);
    if (earlier !== undefined) {
      diagnostics.push({
        filePath: agent.filePath ?? agent.baseDir,
        agentType: agent.agentType,
        severity: 'warning',
        reason: `agent "${agent.agentType}" is also defined in ${earlier}; this later file wins — rename one of them`,
      });
    } else {
      firstFileByType.set(agent.agentType, agent.filePath ?? agent.baseDir);
    }
    agents.push(agent);
  }
  return { agents, diagnostics };
}
