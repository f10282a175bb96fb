import { type PermissionRule, TOOL_NAMES, permissionRuleProblem } from '@delegate/core';
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

// Built-in tool names by their lower case, to catch a rule that names one in another case.
const BUILT_IN_BY_LOWER_CASE = new Map(
  Object.values(TOOL_NAMES).map((name) => [name.toLowerCase(), name]),
);

const RULE_EFFECT: Record<PermissionRule['ruleBehavior'], string> = {
  allow: 'allows nothing',
  deny: 'denies nothing',
  ask: 'asks about nothing',
};

/**
 * Rule strings from settings and flags as permission rules, each naming where it came from.
 * A string that is no rule (`Bash(rm:*` without its parenthesis, a wildcard such as `Bash*`
 * other than a whole MCP server's `mcp__server__*`) is a `UsageError` naming the flag or the
 * file: taken as it is, it would name a tool that does not exist, and a deny rule would
 * silently stop nothing. `mcp__server` and `mcp__server__*` name every tool of that server.
 * Tool names match exactly, as in Claude Code: a rule naming a
 * built-in tool in another case (`bash`) is kept as written, and `onWarning` is told it
 * matches no tool.
 */
export async function toPermissionRules(
  sourced: readonly Sourced<string>[],
  behavior: PermissionRule['ruleBehavior'],
  onWarning?: (message: string) => void,
): Promise<PermissionRule[]> {
  const { permissionRuleValueFromString } = await import('@delegate/tool-filter');
  return sourced.flatMap((rule) =>
    splitToolRules([rule.value]).map((spec) => {
      const ruleValue = permissionRuleValueFromString(spec);
      const problem = permissionRuleProblem(ruleValue);
      if (problem !== undefined) {
        throw new UsageError(
          `${rule.where ?? 'a permission rule'}: "${spec.slice(0, 80)}" is not a permission rule: ${problem}. Write a tool name, optionally with content in parentheses, such as "Bash(git commit:*)", "Read", "Agent(Explore)", or "mcp__github" (also "mcp__github__*") for every tool of that MCP server.`,
        );
      }
      const meant = BUILT_IN_BY_LOWER_CASE.get(ruleValue.toolName.toLowerCase());
      if (meant !== undefined && meant !== ruleValue.toolName) {
        onWarning?.(
          `${rule.where ?? 'a permission rule'}: "${spec.slice(0, 80)}" names no tool, so this ${behavior} rule ${RULE_EFFECT[behavior]}: tool names are case-sensitive. Did you mean "${meant}"?`,
        );
      }
      return { source: RULE_SOURCES[rule.origin], ruleBehavior: behavior, ruleValue };
    }),
  );
}
