import { DelegateError, type PermissionRule } from '@delegate/core';
import { checkRuleArguments, formatAgentDeniedMessage } from './format-agent-denied-message.js';
import { permissionRuleValueToString } from './permission-rule-value-to-string.js';

/** Builds the `AGENT_DENIED` error for a denied agent type, with the rule and source in `details`. */
export function createAgentDeniedError(
  agentType: string,
  rule: PermissionRule | undefined,
): DelegateError {
  checkRuleArguments('createAgentDeniedError()', agentType, rule);
  return new DelegateError('AGENT_DENIED', formatAgentDeniedMessage(agentType, rule), {
    details: {
      agentType,
      rule: rule === undefined ? undefined : permissionRuleValueToString(rule.ruleValue),
      source: rule?.source,
    },
  });
}
