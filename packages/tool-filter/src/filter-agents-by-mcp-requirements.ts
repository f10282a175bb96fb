import { hasRequiredMcpServers, type McpRequirementFields } from './has-required-mcp-servers.js';

/** Keeps the agents whose required MCP servers all have tools, in order. */
export function filterAgentsByMcpRequirements<A extends McpRequirementFields>(
  agents: readonly A[],
  serversWithTools: readonly string[],
): A[] {
  return agents.filter((agent) => hasRequiredMcpServers(agent, serversWithTools));
}
