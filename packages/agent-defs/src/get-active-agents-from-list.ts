import { AGENT_SOURCE_PRECEDENCE, type AgentDefinition } from '@delegate/core';

/**
 * Picks one definition per agent type: sources are applied from lowest to highest
 * precedence (built-in, plugin, user, project, flag, policy), and within a source a later
 * definition overrides an earlier one.
 */
export function getActiveAgentsFromList(allAgents: readonly AgentDefinition[]): AgentDefinition[] {
  const byType = new Map<string, AgentDefinition>();
  for (const source of AGENT_SOURCE_PRECEDENCE) {
    for (const agent of allAgents) {
      if (agent.source === source) byType.set(agent.agentType, agent);
    }
  }
  return [...byType.values()];
}
