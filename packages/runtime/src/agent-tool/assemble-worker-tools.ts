import { type AgentDefinition, type Tool, type ToolUseContext, TOOL_NAMES } from '@delegate/core';
import { resolveAgentTools } from '@delegate/tool-filter';
import type { AgentRuntime } from '../session/agent-runtime.js';

/**
 * A sub-agent's tools, assembled independently of its caller's: the base tools, the MCP
 * tools and the Agent tool (so `Agent(type, …)` specs resolve; the gates decide whether it
 * stays), resolved against the definition. TaskOutput, TaskStop and SendMessage are the
 * main thread's and never offered. `invalidTools` are the definition's `tools` specs that
 * match no tool of that pool (a misspelt name, an MCP tool of a server the session lacks, a
 * tool the sub-agent or background gates removed).
 */
export function assembleWorkerTools(
  runtime: AgentRuntime,
  context: ToolUseContext,
  agent: AgentDefinition,
  isAsync: boolean,
): { tools: Tool[]; allowedAgentTypes: string[] | undefined; invalidTools: string[] } {
  const agentTool = runtime.agentTools().filter((tool) => tool.name === TOOL_NAMES.agent);
  const pool = [...runtime.baseTools(), ...context.getAppState().mcp.tools, ...agentTool];
  const resolved = resolveAgentTools(agent, pool, { isAsync, isMainThread: false });
  return {
    tools: resolved.resolvedTools,
    allowedAgentTypes: resolved.allowedAgentTypes,
    invalidTools: resolved.invalidTools,
  };
}
