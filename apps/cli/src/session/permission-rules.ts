import { type PermissionRule, TOOL_NAME_PATTERN } from '@delegate/core';
import { UsageError } from '../exit-codes.js';
import type { Sourced } from '../settings/resolve-config.js';
import type { SettingOrigin } from '../settings/settings-schema.js';
import { splitToolRules } from './split-tool-rules.js';

const RULE_SOURCES: Record<SettingOrigin, PermissionRule['source']> = {
  default: 'session',
  user: 'userSettings',
  project: 'projectSettings',
  local: 'localSettings',
  env: 'session',
  flag: 'cliArg',
};

/**
 * Rule strings from settings and flags as permission rules, each naming where it came from.
 * A string that is no rule (`Bash(rm:*` without its parenthesis) is a `UsageError` naming the
 * flag or the file: taken as it is, it would name a tool that does not exist, and a deny rule
 * would silently stop nothing.
 */
export async function toPermissionRules(
  sourced: readonly Sourced<string>[],
  behavior: PermissionRule['ruleBehavior'],
): Promise<PermissionRule[]> {
  const { permissionRuleValueFromString } = await import('@delegate/tool-filter');
  return sourced.flatMap((rule) =>
    splitToolRules([rule.value]).map((spec) => {
      const ruleValue = permissionRuleValueFromString(spec);
      if (!TOOL_NAME_PATTERN.test(ruleValue.toolName)) {
        throw new UsageError(
          `${rule.where ?? 'a permission rule'}: "${spec.slice(0, 80)}" is not a permission rule. Write a tool name, optionally with content in parentheses, such as "Bash(git commit:*)", "Read" or "Agent(Explore)".`,
        );
      }
      return { source: RULE_SOURCES[rule.origin], ruleBehavior: behavior, ruleValue };
    }),
  );
}
