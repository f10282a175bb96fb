import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import * as toolFilter from './index.js';

const context = { denyRules: [] };
const agent = { source: 'userSettings' as const };
const rule = {
  source: 'userSettings' as const,
  ruleBehavior: 'deny' as const,
  ruleValue: { toolName: 'Agent', ruleContent: 'Explore' },
};

function thrown(call: () => unknown): DelegateError {
  try {
    call();
  } catch (error) {
    if (error instanceof DelegateError) return error;
    throw error;
  }
  throw new Error('expected a DelegateError, but the call returned');
}

// Each case: what the call is, the call with one bad argument, and the argument it must name.
const cases: [string, () => unknown, string][] = [
  [
    'resolveToolFilterPolicy(null)',
    () => toolFilter.resolveToolFilterPolicy(null as never),
    'policy',
  ],
  ['isMcpToolName(42)', () => toolFilter.isMcpToolName(42 as never), 'name'],
  ['isMcpTool(null)', () => toolFilter.isMcpTool(null as never), 'tool'],
  [
    'isMcpTool aliases text',
    () => toolFilter.isMcpTool({ name: 'mcp__a__b', aliases: 'x' as never }),
    'tool.aliases',
  ],
  ['isAgentTool(undefined)', () => toolFilter.isAgentTool(undefined as never), 'tool'],
  [
    'toolMatchesSpecName(null, …)',
    () => toolFilter.toolMatchesSpecName(null as never, 'Read'),
    'tool',
  ],
  ['toolInNameSet(…, [])', () => toolFilter.toolInNameSet({ name: 'Read' }, [] as never), 'names'],
  [
    'toolExemptFrom(…, null, …)',
    () => toolFilter.toolExemptFrom({ name: 'Read' }, null as never, []),
    'exempt',
  ],
  [
    'disallowedNameRemoves(null, …)',
    () => toolFilter.disallowedNameRemoves(null as never, 'x'),
    'name',
  ],
  [
    'disallowedNameRemoves(…, [])',
    () => toolFilter.disallowedNameRemoves('x', [] as never),
    'toolName',
  ],
  ['filterToolsForAgent(null)', () => toolFilter.filterToolsForAgent(null as never), 'options'],
  [
    'filterToolsForAgent tools text',
    () => toolFilter.filterToolsForAgent({ tools: 'text' as never, isBuiltIn: false }),
    'options.tools',
  ],
  [
    'filterToolsForAgent tool null',
    () => toolFilter.filterToolsForAgent({ tools: [null as never], isBuiltIn: false }),
    'options.tools[0]',
  ],
  [
    'filterToolsForAgent policy null',
    () => toolFilter.filterToolsForAgent({ tools: [], isBuiltIn: false, policy: null as never }),
    'options.policy',
  ],
  ['isAgentSwarmsEnabled(null)', () => toolFilter.isAgentSwarmsEnabled(null as never), 'options'],
  ['isEnvTruthy(42)', () => toolFilter.isEnvTruthy(42 as never), 'value'],
  [
    'permissionRuleValueFromString(null)',
    () => toolFilter.permissionRuleValueFromString(null as never),
    'spec',
  ],
  ['unescapeRuleContent(42)', () => toolFilter.unescapeRuleContent(42 as never), 'content'],
  [
    'escapeRuleContent(undefined)',
    () => toolFilter.escapeRuleContent(undefined as never),
    'content',
  ],
  [
    'permissionRuleValueToString(null)',
    () => toolFilter.permissionRuleValueToString(null as never),
    'value',
  ],
  [
    'permissionRuleValueToString toolName 42',
    () => toolFilter.permissionRuleValueToString({ toolName: 42 as never }),
    'value.toolName',
  ],
  ['resolveAgentTools(null, …)', () => toolFilter.resolveAgentTools(null as never, []), 'agent'],
  [
    'resolveAgentTools(…, null)',
    () => toolFilter.resolveAgentTools(agent, null as never),
    'availableTools',
  ],
  [
    'resolveAgentTools(…, null options)',
    () => toolFilter.resolveAgentTools(agent, [], null as never),
    'options',
  ],
  [
    'resolveAgentTools tools spec 42',
    () => toolFilter.resolveAgentTools({ ...agent, tools: [42 as never] }, []),
    'agent.tools[0]',
  ],
  [
    'resolveAgentTools disallowedTools text',
    () => toolFilter.resolveAgentTools({ ...agent, disallowedTools: 'Bash' as never }, []),
    'agent.disallowedTools',
  ],
  [
    'getDenyRuleForAgent(null, …)',
    () => toolFilter.getDenyRuleForAgent(null as never, 'Agent', 'x'),
    'permissionContext',
  ],
  [
    'getDenyRuleForAgent denyRules undefined',
    () => toolFilter.getDenyRuleForAgent({} as never, 'Agent', 'x'),
    'permissionContext.denyRules',
  ],
  [
    'getDenyRuleForAgent agentType 42',
    () => toolFilter.getDenyRuleForAgent(context, 'Agent', 42 as never),
    'agentType',
  ],
  [
    'filterDeniedAgents(null, …)',
    () => toolFilter.filterDeniedAgents(null as never, context),
    'agents',
  ],
  [
    'filterDeniedAgents agent 42',
    () => toolFilter.filterDeniedAgents([42 as never], context),
    'agents[0]',
  ],
  [
    'filterDeniedAgents agentType null',
    () => toolFilter.filterDeniedAgents([{ agentType: null as never }], context),
    'agents[0].agentType',
  ],
  [
    'formatAgentDeniedMessage rule null',
    () => toolFilter.formatAgentDeniedMessage('x', null as never),
    'rule',
  ],
  [
    'formatAgentDeniedMessage agentType 42',
    () => toolFilter.formatAgentDeniedMessage(42 as never, rule),
    'agentType',
  ],
  [
    'createAgentDeniedError rule text',
    () => toolFilter.createAgentDeniedError('x', 'text' as never),
    'rule',
  ],
  [
    'mcpServersWithTools(undefined)',
    () => toolFilter.mcpServersWithTools(undefined as never),
    'tools',
  ],
  [
    'mcpServersWithTools tool null',
    () => toolFilter.mcpServersWithTools([null as never]),
    'tools[0]',
  ],
  [
    'hasRequiredMcpServers(null, …)',
    () => toolFilter.hasRequiredMcpServers(null as never, []),
    'agent',
  ],
  [
    'missingMcpServers(…, text)',
    () => toolFilter.missingMcpServers({}, 'gh' as never),
    'serversWithTools',
  ],
  [
    'missingMcpServers requiredMcpServers text',
    () => toolFilter.missingMcpServers({ requiredMcpServers: 'gh' as never }, []),
    'agent.requiredMcpServers',
  ],
  [
    'filterAgentsByMcpRequirements(42, …)',
    () => toolFilter.filterAgentsByMcpRequirements(42 as never, []),
    'agents',
  ],
  [
    'filterAgentsByMcpRequirements agent null',
    () => toolFilter.filterAgentsByMcpRequirements([null as never], []),
    'agents[0]',
  ],
];

describe('argument checks', () => {
  it.each(cases)('%s throws INVALID_ARGUMENT naming the argument', (_label, call, option) => {
    const error = thrown(call);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(/^[A-Za-z]+\(\): /);
    expect(error.message).toContain(` ${option} must be `);
    expect(error.message).toMatch(/; got (null|undefined|an? .+)\.$/);
  });

  it('names the function in the message', () => {
    expect(thrown(() => toolFilter.permissionRuleValueFromString(null as never)).message).toBe(
      'permissionRuleValueFromString(): spec must be a string; got null.',
    );
  });

  it('still accepts valid input', () => {
    expect(
      toolFilter.filterDeniedAgents([{ agentType: 'Explore' }], { denyRules: [rule] }),
    ).toEqual([]);
    expect(toolFilter.isEnvTruthy(undefined)).toBe(false);
    expect(toolFilter.missingMcpServers({ requiredMcpServers: ['gh'] }, ['my-gh-server'])).toEqual(
      [],
    );
  });
});
