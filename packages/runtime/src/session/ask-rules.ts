import type { CanUseTool, PermissionRule, Tool } from '@delegate/core';
import { permissionRuleValueToString } from '@delegate/tool-filter';
import {
  type AskHandler,
  decideByRules,
  needsShellAnalysis,
  prepareRuleChecks,
} from '../permissions.js';

/**
 * The first ask rule that matches the call. Matching is the deny rules' matching (a rule
 * about one command matches when any part of a chained line does), which is the cautious
 * reading for a rule that asks.
 */
function matchingAskRule(
  rules: readonly PermissionRule[],
  tool: Tool,
  input: unknown,
): PermissionRule | undefined {
  return rules.find(
    (rule) =>
      decideByRules({ tool, input, mode: 'default', denyRules: [rule] }).behavior === 'deny',
  );
}

/**
 * Adds ask rules (`askRules` of the permission context) to a permission check: deny rules
 * still come first; a call an ask rule matches is put to the person through `ask` in every
 * mode but `plan` (which refuses what changes things anyway), even when an allow rule or
 * the mode would approve it; where nobody can be asked (no handler, `dontAsk`, background
 * agents) it is denied. Calls no ask rule matches go to `inner` unchanged.
 */
export function withAskRules(inner: CanUseTool, options: { ask?: AskHandler } = {}): CanUseTool {
  return async (tool, input, context, assistantMessage, toolUseId) => {
    const permission = context.getAppState().toolPermissionContext;
    if (permission.askRules.length > 0 && needsShellAnalysis(input)) await prepareRuleChecks();
    const rule = matchingAskRule(permission.askRules, tool, input);
    const deniedByRule =
      rule &&
      decideByRules({ tool, input, mode: 'default', denyRules: permission.denyRules }).behavior ===
        'deny';
    if (!rule || deniedByRule || permission.mode === 'plan')
      return inner(tool, input, context, assistantMessage, toolUseId);
    if (tool.checkPermissions) {
      const own = await tool.checkPermissions(input, context);
      if (own.behavior === 'deny') return own;
    }
    const message = `${tool.name} matches the ask rule ${permissionRuleValueToString(rule.ruleValue)} from ${rule.source}.`;
    if (!options.ask || permission.mode === 'dontAsk' || permission.shouldAvoidPermissionPrompts) {
      return {
        behavior: 'deny',
        message: `${message} It needs approval and no one can be asked here. Report what you would have done instead.`,
      };
    }
    return options.ask({ tool, input, message, context });
  };
}
