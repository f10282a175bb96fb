import { describe, expect, it } from 'vitest';
import { type PermissionRule } from '@delegate/core';
import { getDenyRuleForAgent } from './get-deny-rule-for-agent.js';
import { permissionRuleValueFromString } from './permission-rule-value-from-string.js';

const deny = (
  spec: string,
  source: PermissionRule['source'] = 'projectSettings',
): PermissionRule => ({
  source,
  ruleBehavior: 'deny',
  ruleValue: permissionRuleValueFromString(spec),
});

describe('getDenyRuleForAgent', () => {
  it('finds the rule naming the agent type, with its source', () => {
    const rule = deny('Agent(Explore)', 'policySettings');
    const context = { denyRules: [deny('Bash'), deny('Agent(Plan)'), rule] };
    expect(getDenyRuleForAgent(context, 'Agent', 'Explore')).toBe(rule);
  });

  it('reads a Task(...) rule as an Agent(...) rule, and the other way round', () => {
    const rule = deny('Task(Explore)');
    expect(getDenyRuleForAgent({ denyRules: [rule] }, 'Agent', 'Explore')).toBe(rule);
    expect(
      getDenyRuleForAgent({ denyRules: [deny('Agent(Explore)')] }, 'Task', 'Explore'),
    ).toBeDefined();
  });

  it('denies every agent type for a whole-tool Agent rule', () => {
    const rule = deny('Agent');
    for (const agentType of ['Explore', 'general-purpose', 'my-agent']) {
      expect(getDenyRuleForAgent({ denyRules: [rule] }, 'Agent', agentType)).toBe(rule);
    }
  });

  it('denies each type of a comma list', () => {
    const rule = deny('Agent(Explore, Plan)');
    expect(getDenyRuleForAgent({ denyRules: [rule] }, 'Agent', 'Plan')).toBe(rule);
    expect(getDenyRuleForAgent({ denyRules: [rule] }, 'Agent', 'general-purpose')).toBeUndefined();
  });

  it('ignores rules about other tools and other agent types', () => {
    const context = {
      denyRules: [deny('Bash(Explore)'), deny('Agent(Plan)'), deny('Agent(explore)')],
    };
    expect(getDenyRuleForAgent(context, 'Agent', 'Explore')).toBeUndefined();
  });

  it('follows a renamed agent tool', () => {
    const rule = deny('Spawn(Explore)');
    expect(getDenyRuleForAgent({ denyRules: [rule] }, 'Spawn', 'Explore')).toBe(rule);
    expect(getDenyRuleForAgent({ denyRules: [rule] }, 'Agent', 'Explore')).toBeUndefined();
  });

  it('reports the policy rule when rules from several sources match, else the first', () => {
    const project = deny('Agent(Explore)', 'projectSettings');
    const user = deny('Agent', 'userSettings');
    const policy = deny('Task(Plan, Explore)', 'policySettings');
    expect(getDenyRuleForAgent({ denyRules: [project, user, policy] }, 'Agent', 'Explore')).toBe(
      policy,
    );
    expect(getDenyRuleForAgent({ denyRules: [user, project] }, 'Agent', 'Explore')).toBe(user);
  });

  it('reads spaced and trailing-comma lists, and a * entry as every type', () => {
    expect(
      getDenyRuleForAgent({ denyRules: [deny('Agent( Explore )')] }, 'Agent', 'Explore'),
    ).toBeDefined();
    const trailing = { denyRules: [deny('Agent(Explore,)')] };
    expect(getDenyRuleForAgent(trailing, 'Agent', 'Explore')).toBeDefined();
    expect(getDenyRuleForAgent(trailing, 'Agent', 'Plan')).toBeUndefined();
    const starred = deny('Agent(Explore, *)');
    expect(getDenyRuleForAgent({ denyRules: [starred] }, 'Agent', 'my-agent')).toBe(starred);
  });
});
