import { TOOL_NAMES, type AgentDefinition } from '@delegate/core';
import { getDenyRuleForAgent, type DenyRulesContext } from './get-deny-rule-for-agent.js';

/** Removes the agents a deny rule such as `Agent(Explore)` hides, keeping order. */
export function filterDeniedAgents<A extends Pick<AgentDefinition, 'agentType'>>(
  agents: readonly A[],
  permissionContext: DenyRulesContext,
  agentToolName: string = TOOL_NAMES.agent,
): A[] {
  return agents.filter(
    (agent) => getDenyRuleForAgent(permissionContext, agentToolName, agent.agentType) === undefined,
  );
}
