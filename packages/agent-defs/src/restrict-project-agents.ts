import type { AgentDefinition } from '@delegate/core';
import type { AgentDefinitionsLoadResult } from './get-agent-definitions-with-overrides.js';

/** A field of an agent file that {@link restrictProjectAgent} did not apply. */
export type IgnoredAgentField = {
  /** The agent file (or its folder). */
  where: string;
  /** The field: `permissionMode`, `hooks` or `mcpServers`. */
  field: string;
  /** Why it was not applied. */
  reason: string;
};

// Modes that approve more than `default`; `plan` and `dontAsk` only restrict.
const LOOSER_MODES: ReadonlySet<string> = new Set(['acceptEdits', 'bypassPermissions']);

/**
 * One definition as a run of an untrusted project gets it (see
 * {@link restrictProjectAgents}); what was not applied is pushed to `ignored`. Returns the
 * definition itself when it is not a project file.
 */
export function restrictProjectAgent(
  agent: AgentDefinition,
  ignored: IgnoredAgentField[],
): AgentDefinition {
  if (agent.source !== 'projectSettings') return agent;
  const where = agent.filePath ?? agent.baseDir;
  const drop = (field: string, reason: string): void => void ignored.push({ where, field, reason });
  const kept: AgentDefinition = { ...agent };
  // The rule of the project's settings files: `plan` and `dontAsk` only restrict, and stay.
  const mode = agent.permissionMode;
  if (mode !== undefined && mode !== 'bubble' && LOOSER_MODES.has(mode)) {
    drop(
      'permissionMode',
      `${agent.permissionMode} approves more than a project's own files may set, so the agent runs in the default mode for sub-agents`,
    );
    delete kept.permissionMode;
  }
  if (agent.hooks !== undefined && Object.keys(agent.hooks).length > 0) {
    drop('hooks', 'hook commands are programs the project would run');
    delete kept.hooks;
  }
  const inline = agent.mcpServers?.filter((server) => typeof server !== 'string') ?? [];
  if (inline.length > 0) {
    drop('mcpServers', 'servers defined in the file are programs the project would start');
    // Names of servers the user configured stay: they start nothing new.
    const named = agent.mcpServers?.filter((server) => typeof server === 'string') ?? [];
    if (named.length > 0) kept.mcpServers = named;
    else delete kept.mcpServers;
  }
  return kept;
}

/**
 * The agent definitions a run of an untrusted project gets: each agent file of the project
 * (`.claude/agents`, `.delegate/agents`) keeps what can only restrict and loses what would
 * widen access or run programs, as the project's settings files do: a looser
 * `permissionMode` (`acceptEdits`, `bypassPermissions`), `hooks`, and MCP servers defined in
 * the file. User, plugin, `--agents` and built-in definitions are the user's own and pass
 * unchanged. Returns the definitions and what was not applied, file by file.
 */
export function restrictProjectAgents(definitions: AgentDefinitionsLoadResult): {
  definitions: AgentDefinitionsLoadResult;
  ignored: IgnoredAgentField[];
} {
  const ignored: IgnoredAgentField[] = [];
  const restricted = new Map<AgentDefinition, AgentDefinition>();
  const restrict = (agent: AgentDefinition): AgentDefinition => {
    let kept = restricted.get(agent);
    if (kept === undefined) {
      kept = restrictProjectAgent(agent, ignored);
      restricted.set(agent, kept);
    }
    return kept;
  };
  return {
    definitions: {
      ...definitions,
      allAgents: definitions.allAgents.map(restrict),
      activeAgents: definitions.activeAgents.map(restrict),
    },
    ignored,
  };
}
