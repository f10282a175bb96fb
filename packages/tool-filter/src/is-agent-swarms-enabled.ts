import { checkOptionalObject, checkString } from '@delegate/core';

/** Environment variable that opts in to agent teams (in-process teammates). */
export const AGENT_TEAMS_ENV_VAR = 'DELEGATE_EXPERIMENTAL_AGENT_TEAMS';

const TRUTHY_VALUES: ReadonlySet<string> = new Set(['1', 'true', 'yes', 'on']);

/** Inputs of the agent-teams gate; pass `process.env` as `env` (the function reads nothing itself). */
export type AgentSwarmsGateOptions = {
  /** Environment to read {@link AGENT_TEAMS_ENV_VAR} from. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Command-line flags; `agentTeams: true` opts in like the environment variable. */
  flags?: { agentTeams?: boolean | undefined } | undefined;
  /** `true` turns agent teams off whatever the opt-in says. */
  killswitch?: boolean | undefined;
};

/** True when `value` is 1, true, yes or on (any case, surrounding spaces ignored). */
export function isEnvTruthy(value: string | undefined): boolean {
  if (value !== undefined) checkString('isEnvTruthy()', 'value', value);
  return value !== undefined && TRUTHY_VALUES.has(value.trim().toLowerCase());
}

/**
 * True when agent teams are on: opted in through {@link AGENT_TEAMS_ENV_VAR} or
 * `flags.agentTeams`, and not turned off by the killswitch (which always wins).
 */
export function isAgentSwarmsEnabled(options: AgentSwarmsGateOptions = {}): boolean {
  checkOptionalObject('isAgentSwarmsEnabled()', 'options', options);
  if (options.killswitch === true) return false;
  return isEnvTruthy(options.env?.[AGENT_TEAMS_ENV_VAR]) || options.flags?.agentTeams === true;
}
