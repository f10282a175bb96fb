import type { PermissionRule } from '@delegate/core';
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

/** Rule strings from settings and flags as permission rules, each naming where it came from. */
export async function toPermissionRules(
  sourced: readonly Sourced<string>[],
  behavior: PermissionRule['ruleBehavior'],
): Promise<PermissionRule[]> {
  const { permissionRuleValueFromString } = await import('@delegate/tool-filter');
  return sourced.flatMap((rule) =>
    splitToolRules([rule.value]).map((spec) => ({
      source: RULE_SOURCES[rule.origin],
      ruleBehavior: behavior,
      ruleValue: permissionRuleValueFromString(spec),
    })),
  );
}
