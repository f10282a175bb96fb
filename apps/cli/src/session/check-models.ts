import { UsageError } from '../exit-codes.js';
import type { EffectiveConfig } from '../settings/resolve-config.js';

const EXPECTED_MODEL = 'expected a model: sonnet, opus, haiku or a model id, not an empty value';

/**
 * Refuses a model that is only white space (`ANTHROPIC_MODEL="  "`, `"model": " "` in a
 * settings file) as a usage error naming where it was set, as `--model ''` is refused.
 */
export function checkModels(config: EffectiveConfig): void {
  for (const [field, setting] of [
    ['model', config.model],
    ['subagentModel', config.subagentModel],
  ] as const) {
    if (setting.value === undefined || setting.value.trim() !== '') continue;
    const where =
      setting.origin === 'flag' || setting.origin === 'env'
        ? (setting.where ?? field)
        : `${field} in ${setting.where ?? 'a settings file'}`;
    throw new UsageError(`${where}: ${EXPECTED_MODEL}.`);
  }
}
