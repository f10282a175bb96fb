import { type AgentDefinition, checkArray, checkObject } from '@delegate/core';

/** The field of an agent definition the MCP requirement checks read. */
export type McpRequirementFields = Pick<AgentDefinition, 'requiredMcpServers'>;

/** True when some server name contains `pattern`, ignoring case. */
function patternMatchesAServer(pattern: string, serversWithTools: readonly string[]): boolean {
  const needle = pattern.toLowerCase();
  return serversWithTools.some((server) => server.toLowerCase().includes(needle));
}

/** Throws `INVALID_ARGUMENT` unless the agent and the server list have the right kinds. */
export function checkMcpArguments(
  where: string,
  agent: unknown,
  serversWithTools: unknown,
  agentOption = 'agent',
): void {
  checkObject(where, agentOption, agent);
  const required = (agent as { requiredMcpServers?: unknown }).requiredMcpServers;
  if (required !== undefined && required !== null) {
    checkArray(where, `${agentOption}.requiredMcpServers`, required);
  }
  checkArray(where, 'serversWithTools', serversWithTools);
}

/** The agent's required server patterns that match no server with tools (empty when satisfied). */
export function missingMcpServers(
  agent: McpRequirementFields,
  serversWithTools: readonly string[],
): string[] {
  checkMcpArguments('missingMcpServers()', agent, serversWithTools);
  return (agent.requiredMcpServers ?? []).filter(
    (pattern) => !patternMatchesAServer(pattern, serversWithTools),
  );
}

/**
 * True when every pattern in the agent's `requiredMcpServers` is contained in the name
 * of some server with tools (case-insensitive); true when it requires none.
 */
export function hasRequiredMcpServers(
  agent: McpRequirementFields,
  serversWithTools: readonly string[],
): boolean {
  checkMcpArguments('hasRequiredMcpServers()', agent, serversWithTools);
  return missingMcpServers(agent, serversWithTools).length === 0;
}
