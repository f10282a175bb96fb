import {
  TOOL_NAMES,
  type AgentDefinition,
  checkArray,
  checkObject,
  checkString,
} from '@delegate/core';
import {
  checkDenyRules,
  getDenyRuleForAgent,
  type DenyRulesContext,
} from './get-deny-rule-for-agent.js';

/** Removes the agents a deny rule such as `Agent(Explore)` hides, keeping order. */
export function filterDeniedAgents<A extends Pick<AgentDefinition, 'agentType'>>(
  agents: readonly A[],
  permissionContext: DenyRulesContext,
  agentToolName: string = TOOL_NAMES.agent,
): A[] {
  const where = 'filterDeniedAgents()';
  checkArray(where, 'agents', agents);
  checkDenyRules(where, permissionContext);
  checkString(where, 'agentToolName', agentToolName);
  return agents.filter((agent, index) => {
    checkObject(where, `agents[${index}]`, agent);
    checkString(where, `agents[${index}].agentType`, agent.agentType);
    return getDenyRuleForAgent(permissionContext, agentToolName, agent.agentType) === undefined;
  });
}
