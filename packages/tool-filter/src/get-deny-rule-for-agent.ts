import { type PermissionRule, type ToolPermissionContext } from '@delegate/core';
import { isAgentToolName } from './tool-name-matching.js';

/** The part of a permission context the agent deny checks read. */
export type DenyRulesContext = Pick<ToolPermissionContext, 'denyRules'>;

function ruleNamesAgentTool(ruleToolName: string, agentToolName: string): boolean {
  if (ruleToolName === agentToolName) return true;
  return isAgentToolName(ruleToolName) && isAgentToolName(agentToolName);
}

function ruleCoversAgentType(ruleContent: string | undefined, agentType: string): boolean {
  const content = ruleContent?.trim() ?? '';
  if (content === '' || content === '*') return true;
  return content.split(',').some((listed) => listed.trim() === agentType);
}

/**
 * Finds the first deny rule that hides `agentType`: `Agent(<type>)` (also written
 * `Task(<type>)` or as a comma list `Agent(a, b)`) or the whole-tool rule `Agent`, which
 * denies every type. Returns the rule with its `source`, or `undefined` when none applies.
 */
export function getDenyRuleForAgent(
  permissionContext: DenyRulesContext,
  agentToolName: string,
  agentType: string,
): PermissionRule | undefined {
  return permissionContext.denyRules.find(
    (rule) =>
      ruleNamesAgentTool(rule.ruleValue.toolName, agentToolName) &&
      ruleCoversAgentType(rule.ruleValue.ruleContent, agentType),
  );
}
