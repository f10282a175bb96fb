import type { AgentDefinition, McpClientState } from '@delegate/core';
import { parseAgentHooks } from '../hooks/agent-hooks.js';
import { createToolCallHooks } from '../hooks/create-tool-call-hooks.js';
import type { ToolCallHooks } from '../query/run-tools.js';
import type { AgentRuntime } from '../session/agent-runtime.js';

/** A spawn-time warning about a part of a definition. */
export type DefinitionWarning = {
  /** `SKILLS_IGNORED`, `MCP_SERVERS_IGNORED`, `HOOKS_IGNORED`, `TOOLS_UNAVAILABLE` or `MEMORY_UNAVAILABLE`. */
  code: string;
  /** What is not run, and what to do. */
  message: string;
};

/** What a definition adds to a spawn besides its prompt and tools. */
export type DefinitionExtras = {
  /** Its PreToolUse/PostToolUse hooks, when it has any. */
  toolHooks?: ToolCallHooks;
  /** Parts Delegate does not run. */
  warnings: DefinitionWarning[];
};

function where(agent: AgentDefinition): string {
  return `Agent "${agent.agentType}"${agent.filePath ? ` (${agent.filePath})` : ''}`;
}

function mcpWarnings(
  agent: AgentDefinition,
  clients: readonly McpClientState[],
): DefinitionWarning[] {
  const entries = agent.mcpServers ?? [];
  const configured = new Set(clients.map((client) => client.name));
  const unknown = entries.filter(
    (entry): entry is string => typeof entry === 'string' && !configured.has(entry),
  );
  const inline = entries.flatMap((entry) => (typeof entry === 'string' ? [] : Object.keys(entry)));
  const warnings: DefinitionWarning[] = [];
  if (inline.length > 0) {
    warnings.push({
      code: 'MCP_SERVERS_IGNORED',
      message: `${where(agent)} defines MCP servers inline (${inline.join(', ')}); Delegate does not start servers from agent files. Add them to the session's MCP servers; their tools then reach every agent.`,
    });
  }
  if (unknown.length > 0) {
    warnings.push({
      code: 'MCP_SERVERS_IGNORED',
      message: `${where(agent)} names MCP servers the session does not have (${unknown.join(', ')}); the agent runs without their tools. Configure them in the session's MCP servers.`,
    });
  }
  return warnings;
}

/**
 * Reads the parts of a definition beyond prompt and tools: its hooks (PreToolUse and
 * PostToolUse run; a hook that cannot run refuses the spawn), and warnings for what
 * Delegate does not run (skills, inline or unknown MCP servers, other hook events).
 */
export function readDefinitionExtras(options: {
  runtime: AgentRuntime;
  agent: AgentDefinition;
  agentId: string;
  mcpClients: readonly McpClientState[];
}): DefinitionExtras {
  const { runtime, agent } = options;
  const warnings = mcpWarnings(agent, options.mcpClients);
  if (agent.skills?.length) {
    warnings.push({
      code: 'SKILLS_IGNORED',
      message: `${where(agent)} preloads skills (${agent.skills.join(', ')}); Delegate does not load skills, so the agent runs without them.`,
    });
  }
  const parsed = parseAgentHooks(agent);
  if (parsed.ignoredEvents.length > 0) {
    warnings.push({
      code: 'HOOKS_IGNORED',
      message: `${where(agent)} has hooks for ${parsed.ignoredEvents.join(', ')}; Delegate runs only PreToolUse and PostToolUse hooks, so those do not run.`,
    });
  }
  const transcriptPath = runtime.transcript?.agentPath(options.agentId);
  const toolHooks = createToolCallHooks({
    hooks: parsed.hooks,
    sessionId: runtime.sessionId,
    projectDir: runtime.rootCwd,
    ...(transcriptPath ? { transcriptPath } : {}),
    emit: runtime.events.emit,
  });
  return { ...(toolHooks ? { toolHooks } : {}), warnings };
}
