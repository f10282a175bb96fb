import { AGENT_SOURCE_PRECEDENCE, type AgentDefinition, type AgentSource } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getActiveAgentsFromList } from './get-active-agents-from-list.js';

function agent(agentType: string, source: AgentSource, label: string): AgentDefinition {
  return { agentType, whenToUse: label, source, baseDir: source, getSystemPrompt: () => label };
}

describe('getActiveAgentsFromList', () => {
  it('lets the higher source win whatever the order of the list', () => {
    const list = [
      agent('a', 'policySettings', 'policy'),
      agent('a', 'flagSettings', 'flag'),
      agent('a', 'projectSettings', 'project'),
      agent('a', 'userSettings', 'user'),
      agent('a', 'plugin', 'plugin'),
      agent('a', 'built-in', 'built-in'),
    ];
    expect(getActiveAgentsFromList(list).map((item) => item.whenToUse)).toEqual(['policy']);
    expect(getActiveAgentsFromList(list.slice(1)).map((item) => item.whenToUse)).toEqual(['flag']);
    expect(getActiveAgentsFromList(list.slice(2)).map((item) => item.whenToUse)).toEqual([
      'project',
    ]);
    expect(getActiveAgentsFromList(list.slice(3)).map((item) => item.whenToUse)).toEqual(['user']);
  });

  it('lets the later definition win within one source', () => {
    const list = [agent('a', 'userSettings', 'first'), agent('a', 'userSettings', 'second')];
    expect(getActiveAgentsFromList(list).map((item) => item.whenToUse)).toEqual(['second']);
  });

  it('keeps exactly one definition per type: the last one of the highest source', () => {
    const entry = fc.record({
      type: fc.constantFrom('a', 'b', 'c', 'd'),
      source: fc.constantFrom(...AGENT_SOURCE_PRECEDENCE),
    });
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), (entries) => {
        const list = entries.map((item, index) => agent(item.type, item.source, String(index)));
        const active = getActiveAgentsFromList(list);
        expect(new Set(active.map((item) => item.agentType)).size).toBe(active.length);
        expect(new Set(active.map((item) => item.agentType))).toEqual(
          new Set(entries.map((item) => item.type)),
        );
        for (const winner of active) {
          const rank = (source: AgentSource) => AGENT_SOURCE_PRECEDENCE.indexOf(source);
          const same = list.filter((item) => item.agentType === winner.agentType);
          const best = Math.max(...same.map((item) => rank(item.source)));
          const expected = same.filter((item) => rank(item.source) === best).at(-1);
          expect(winner).toBe(expected);
        }
      }),
    );
  });
});
