import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { type PermissionRule } from '@delegate/core';
import { filterDeniedAgents } from './filter-denied-agents.js';
import { permissionRuleValueFromString } from './permission-rule-value-from-string.js';

const deny = (spec: string): PermissionRule => ({
  source: 'userSettings',
  ruleBehavior: 'deny',
  ruleValue: permissionRuleValueFromString(spec),
});
const agents = ['general-purpose', 'Explore', 'Plan', 'reviewer'].map((agentType) => ({
  agentType,
}));

describe('filterDeniedAgents', () => {
  it('removes the denied types and keeps the rest in order', () => {
    const result = filterDeniedAgents(agents, {
      denyRules: [deny('Agent(Explore)'), deny('Task(reviewer)')],
    });
    expect(result.map((agent) => agent.agentType)).toEqual(['general-purpose', 'Plan']);
  });

  it('removes every agent for a whole-tool Agent deny', () => {
    expect(filterDeniedAgents(agents, { denyRules: [deny('Agent')] })).toEqual([]);
  });

  it('keeps every agent when no rule is about the agent tool', () => {
    expect(
      filterDeniedAgents(agents, { denyRules: [deny('Bash'), deny('Read(Explore)')] }),
    ).toEqual(agents);
  });

  it('uses the given agent tool name', () => {
    const result = filterDeniedAgents(
      agents,
      { denyRules: [deny('Spawn(Plan)'), deny('Agent(Explore)')] },
      'Spawn',
    );
    expect(result.map((agent) => agent.agentType)).toEqual([
      'general-purpose',
      'Explore',
      'reviewer',
    ]);
  });

  it('removes exactly the types named by Agent(...) rules', () => {
    const agentType = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    fc.assert(
      fc.property(
        fc.array(agentType, { maxLength: 6 }),
        fc.array(agentType, { maxLength: 3 }),
        (types, denied) => {
          const list = types.map((type) => ({ agentType: type }));
          const result = filterDeniedAgents(list, {
            denyRules: denied.map((type) => deny(`Agent(${type})`)),
          });
          expect(result).toEqual(list.filter((agent) => !denied.includes(agent.agentType)));
        },
      ),
    );
  });
});
