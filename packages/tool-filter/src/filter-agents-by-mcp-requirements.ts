import { checkArray } from '@delegate/core';
import {
  checkMcpArguments,
  hasRequiredMcpServers,
  type McpRequirementFields,
} from './has-required-mcp-servers.js';

/** Keeps the agents whose required MCP servers all have tools, in order. */
export function filterAgentsByMcpRequirements<A extends McpRequirementFields>(
  agents: readonly A[],
  serversWithTools: readonly string[],
): A[] {
  const where = 'filterAgentsByMcpRequirements()';
  checkArray(where, 'agents', agents);
  checkArray(where, 'serversWithTools', serversWithTools);
  return agents.filter((agent, index) => {
    checkMcpArguments(where, agent, serversWithTools, `agents[${index}]`);
    return hasRequiredMcpServers(agent, serversWithTools);
  });
}
