import {
  type PermissionRule,
  type ToolPermissionContext,
  checkArray,
  checkObject,
  checkString,
} from '@delegate/core';
import { isAgentToolName } from './tool-name-matching.js';

/** The part of a permission context the agent deny checks read. */
export type DenyRulesContext = Pick<ToolPermissionContext, 'denyRules'>;

/** Throws `INVALID_ARGUMENT` unless `permissionContext.denyRules` is an array of rules. */
export function checkDenyRules(where: string, permissionContext: unknown): void {
  checkObject(where, 'permissionContext', permissionContext);
  const rules = (permissionContext as { denyRules?: unknown }).denyRules;
  checkArray(where, 'permissionContext.denyRules', rules);
  (rules as unknown[]).forEach((rule, index) => {
    const option = `permissionContext.denyRules[${index}]`;
    checkObject(where, option, rule);
    checkObject(where, `${option}.ruleValue`, (rule as { ruleValue?: unknown }).ruleValue);
  });
}

function ruleNamesAgentTool(ruleToolName: string, agentToolName: string): boolean {
  if (ruleToolName === agentToolName) return true;
  return isAgentToolName(ruleToolName) && isAgentToolName(agentToolName);
}

function ruleCoversAgentType(ruleContent: string | undefined, agentType: string): boolean {
  const content = ruleContent?.trim() ?? '';
  if (content === '' || content === '*') return true;
  // A `*` anywhere in the list (`Agent(Explore, *)`) denies every type: reading it as a
  // type literally called `*` would let every other type through a rule meant to block.
  return content.split(',').some((listed) => {
    const type = listed.trim();
    return type === '*' || type === agentType;
  });
}

/**
 * Finds the deny rule that hides `agentType`: `Agent(<type>)` (also written
 * `Task(<type>)` or as a comma list `Agent(a, b)`, where a `*` entry covers every type)
 * or the whole-tool rule `Agent`, which denies every type. When several rules match, a
 * `policySettings` rule is reported first (the user cannot remove it, so naming another
 * rule would send them to fix the wrong file); otherwise the first in list order.
 * Returns the rule with its `source`, or `undefined` when none applies.
 */
export function getDenyRuleForAgent(
  permissionContext: DenyRulesContext,
  agentToolName: string,
  agentType: string,
): PermissionRule | undefined {
  checkDenyRules('getDenyRuleForAgent()', permissionContext);
  checkString('getDenyRuleForAgent()', 'agentToolName', agentToolName);
  checkString('getDenyRuleForAgent()', 'agentType', agentType);
  const matching = permissionContext.denyRules.filter(
    (rule) =>
      ruleNamesAgentTool(rule.ruleValue.toolName, agentToolName) &&
      ruleCoversAgentType(rule.ruleValue.ruleContent, agentType),
  );
  return matching.find((rule) => rule.source === 'policySettings') ?? matching[0];
}
