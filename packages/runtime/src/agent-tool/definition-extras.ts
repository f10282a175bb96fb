import type { AgentDefinition, McpClientState } from '@delegate/core';
import type { McpServerConfig } from '@delegate/tools';
import { parseAgentHooks } from '../hooks/agent-hooks.js';
import { createToolCallHooks } from '../hooks/create-tool-call-hooks.js';
import type { ToolCallHooks } from '../query/run-tools.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { readInlineMcpServers } from './agent-mcp-servers.js';

/** A spawn-time warning about a part of a definition. */
export type DefinitionWarning = {
  /** `SKILLS_IGNORED`, `MCP_SERVERS_IGNORED`, `MCP_SERVER_FAILED`, `HOOKS_IGNORED`, `TOOLS_UNAVAILABLE` or `MEMORY_UNAVAILABLE`. */
  code: string;
  /** What is not run, and what to do. */
  message: string;
};

/** What a definition adds to a spawn besides its prompt and tools. */
export type DefinitionExtras = {
  /** Its PreToolUse/PostToolUse hooks, when it has any. */
  toolHooks?: ToolCallHooks;
  /** The MCP servers it defines inline that can start: started for each of its runs. */
  mcpServers?: Record<string, McpServerConfig>;
  /** Parts Delegate does not run. */
  warnings: DefinitionWarning[];
};

function where(agent: AgentDefinition): string {
  return `Agent "${agent.agentType}"${agent.filePath ? ` (${agent.filePath})` : ''}`;
}

function unknownServerWarnings(
  agent: AgentDefinition,
  configured: ReadonlySet<string>,
): DefinitionWarning[] {
  const unknown = (agent.mcpServers ?? []).filter(
    (entry): entry is string => typeof entry === 'string' && !configured.has(entry),
  );
  if (unknown.length === 0) return [];
  return [
    {
      code: 'MCP_SERVERS_IGNORED',
      message: `${where(agent)} names MCP servers the session does not have (${unknown.join(', ')}); the agent runs without their tools. Configure them in the session's MCP servers.`,
    },
  ];
}

/**
 * Reads the parts of a definition beyond prompt and tools: its hooks (PreToolUse and
 * PostToolUse run; a hook that cannot run refuses the spawn), the MCP servers it defines
 * inline (started for each run, see `connectAgentMcpServers`), and warnings for what Delegate
 * does not run (skills, unknown or unusable MCP servers, other hook events).
 */
export function readDefinitionExtras(options: {
  runtime: AgentRuntime;
  agent: AgentDefinition;
  agentId: string;
  mcpClients: readonly McpClientState[];
}): DefinitionExtras {
  const { runtime, agent } = options;
  const configured = new Set(options.mcpClients.map((client) => client.name));
  const inline = readInlineMcpServers(agent, configured);
  const warnings = [...inline.warnings, ...unknownServerWarnings(agent, configured)];
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
  return {
    ...(toolHooks ? { toolHooks } : {}),
    ...(Object.keys(inline.servers).length > 0 ? { mcpServers: inline.servers } : {}),
    warnings,
  };
}
