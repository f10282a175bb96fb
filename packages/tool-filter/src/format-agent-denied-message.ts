import { type PermissionRule, checkObject, checkString } from '@delegate/core';
import { permissionRuleValueToString } from './permission-rule-value-to-string.js';

/** Throws `INVALID_ARGUMENT` unless `agentType` is a string and `rule` a rule or undefined. */
export function checkRuleArguments(where: string, agentType: unknown, rule: unknown): void {
  checkString(where, 'agentType', agentType);
  if (rule === undefined) return;
  checkObject(where, 'rule', rule);
  checkObject(where, 'rule.ruleValue', (rule as { ruleValue?: unknown }).ruleValue);
}

/**
 * Explains that `agentType` may not be used, naming the deny rule as written
 * (`Agent(Explore)`) and the settings it came from.
 */
export function formatAgentDeniedMessage(
  agentType: string,
  rule: PermissionRule | undefined,
): string {
  checkRuleArguments('formatAgentDeniedMessage()', agentType, rule);
  if (rule === undefined) {
    return `Agent type '${agentType}' is blocked by a deny rule in the settings. Remove that rule to use this agent type, or pick another one.`;
  }
  const ruleText = permissionRuleValueToString(rule.ruleValue);
  if (rule.source === 'policySettings') {
    return `Agent type '${agentType}' is blocked by the deny rule '${ruleText}' (source: policySettings), which is managed by policy and cannot be overridden in user or project settings. Pick another agent type, or ask the administrator of that policy.`;
  }
  return `Agent type '${agentType}' is blocked by the deny rule '${ruleText}' (source: ${rule.source}). Remove '${ruleText}' from the ${rule.source} deny rules to use this agent type, or pick another one.`;
}
