import { type AgentDefinition } from '@delegate/core';
import { type AgentDiagnostic, type FailedAgentFile } from './agent-diagnostic.js';
import { truncateForDiagnostic } from './truncate-for-diagnostic.js';
import { FLAG_AGENTS_LABEL, parseAgentFromJson } from './parse-agent-from-json.js';
import { type LoadedAgents } from './load-agents-from-directories.js';

/** Input of {@link loadFlagAgents}. */
export type LoadFlagAgentsOptions = {
  /** The `--agents` value: a JSON object `{ name: { description, prompt, … } }` or its JSON text. */
  flagAgents: unknown;
  /** Directory recorded as `baseDir` of each definition. */
  baseDir: string;
};

/** Parses the `--agents` value into `flagSettings` definitions; bad entries get diagnostics, good ones still load. */
export function loadFlagAgents(options: LoadFlagAgentsOptions): LoadedAgents {
  const agents: AgentDefinition[] = [];
  const diagnostics: AgentDiagnostic[] = [];
  const failed: FailedAgentFile[] = [];
  let value = options.flagAgents;
  if (value === undefined || value === null) return { agents, diagnostics, failed };
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch (error) {
      diagnostics.push({
        filePath: FLAG_AGENTS_LABEL,
        severity: 'error',
        reason: `--agents is not valid JSON (${error instanceof SyntaxError ? 'a syntax error' : 'unreadable'}); pass an object like {"name": {"description": "...", "prompt": "..."}}`,
      });
      return { agents, diagnostics, failed };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    diagnostics.push({
      filePath: FLAG_AGENTS_LABEL,
      severity: 'error',
      reason: '--agents must be a JSON object mapping agent names to definitions',
    });
    return { agents, diagnostics, failed };
  }
  let entries: Array<[string, unknown]>;
  try {
    entries = Object.entries(value);
  } catch (error) {
    // An object whose getters throw: report it rather than failing the whole load.
    diagnostics.push({
      filePath: FLAG_AGENTS_LABEL,
      severity: 'error',
      reason: `--agents could not be read (${truncateForDiagnostic(error instanceof Error ? error.message : String(error))}); pass plain JSON data`,
    });
    return { agents, diagnostics, failed };
  }
  for (const [name, definition] of entries) {
    const result = parseAgentFromJson(name, definition, 'flagSettings', {
      filePath: FLAG_AGENTS_LABEL,
      baseDir: options.baseDir,
    });
    if (result.ok) {
      // `"a"` and `" a "` are one type once trimmed: the later one wins, and says so.
      const earlier = agents.find((agent) => agent.agentType === result.agent.agentType);
      if (earlier !== undefined) {
        diagnostics.push({
          filePath: FLAG_AGENTS_LABEL,
          agentType: result.agent.agentType,
          severity: 'warning',
          reason: `--agents defines ${JSON.stringify(result.agent.agentType)} twice (as ${entries
            .filter(([key]) => key.trim() === result.agent.agentType)
            .map(([key]) => JSON.stringify(key))
            .join(' and ')}); the later one is used — remove the other`,
        });
      }
      agents.push(result.agent);
      diagnostics.push(...result.warnings);
    } else {
      diagnostics.push(result.diagnostic);
      failed.push({
        filePath: FLAG_AGENTS_LABEL,
        source: 'flagSettings',
        agentType: name,
        diagnostic: result.diagnostic,
      });
    }
  }
  return { agents, diagnostics, failed };
}
