import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  AGENT_TEAMS_ENV_VAR,
  isAgentSwarmsEnabled,
  isEnvTruthy,
} from './is-agent-swarms-enabled.js';

describe('isAgentSwarmsEnabled', () => {
  it('is off by default', () => {
    expect(isAgentSwarmsEnabled()).toBe(false);
    expect(isAgentSwarmsEnabled({ env: {}, flags: {} })).toBe(false);
  });

  it('turns on through the environment variable with any truthy spelling', () => {
    for (const value of ['1', 'true', 'TRUE', 'Yes', 'on', ' ON ']) {
      expect(isAgentSwarmsEnabled({ env: { [AGENT_TEAMS_ENV_VAR]: value } })).toBe(true);
    }
  });

  it('stays off for other values of the environment variable', () => {
    for (const value of ['', '0', 'false', 'no', 'off', 'enabled', '2']) {
      expect(isAgentSwarmsEnabled({ env: { [AGENT_TEAMS_ENV_VAR]: value } })).toBe(false);
    }
  });

  it('ignores similar variable names', () => {
    expect(isAgentSwarmsEnabled({ env: { CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: '1' } })).toBe(
      false,
    );
  });

  it('turns on through the agentTeams flag', () => {
    expect(isAgentSwarmsEnabled({ flags: { agentTeams: true } })).toBe(true);
    expect(isAgentSwarmsEnabled({ flags: { agentTeams: false } })).toBe(false);
  });

  it('lets the killswitch win over every opt-in', () => {
    fc.assert(
      fc.property(fc.option(fc.string()), fc.boolean(), (value, flag) => {
        const env = value === null ? {} : { [AGENT_TEAMS_ENV_VAR]: value };
        expect(isAgentSwarmsEnabled({ env, flags: { agentTeams: flag }, killswitch: true })).toBe(
          false,
        );
      }),
    );
    expect(isAgentSwarmsEnabled({ env: { [AGENT_TEAMS_ENV_VAR]: '1' }, killswitch: false })).toBe(
      true,
    );
  });
});

describe('isEnvTruthy', () => {
  it('treats a missing value as false', () => {
    expect(isEnvTruthy(undefined)).toBe(false);
  });
});
