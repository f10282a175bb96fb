import { describe, expect, it } from 'vitest';
import { DelegateError, type PermissionRule } from '@delegate/core';
import { createAgentDeniedError } from './create-agent-denied-error.js';
import { formatAgentDeniedMessage } from './format-agent-denied-message.js';

const rule: PermissionRule = {
  source: 'projectSettings',
  ruleBehavior: 'deny',
  ruleValue: { toolName: 'Agent', ruleContent: 'Explore' },
};

describe('formatAgentDeniedMessage', () => {
  it('names the agent type, the rule and its source', () => {
    const message = formatAgentDeniedMessage('Explore', rule);
    expect(message).toContain("'Explore'");
    expect(message).toContain('Agent(Explore)');
    expect(message).toContain('projectSettings');
  });

  it('names a whole-tool rule as written', () => {
    const message = formatAgentDeniedMessage('Plan', {
      ...rule,
      source: 'policySettings',
      ruleValue: { toolName: 'Agent' },
    });
    expect(message).toContain("'Agent'");
    expect(message).toContain('policySettings');
  });

  it('says a policy rule cannot be removed, instead of sending the user to edit it', () => {
    const message = formatAgentDeniedMessage('Plan', { ...rule, source: 'policySettings' });
    expect(message).toContain('policySettings');
    expect(message).not.toMatch(/Remove/);
    expect(message).toMatch(/cannot be overridden/);
  });

  it('still explains itself without a rule', () => {
    expect(formatAgentDeniedMessage('Explore', undefined)).toMatch(/Explore.*deny rule/);
  });
});

describe('createAgentDeniedError', () => {
  it('is an AGENT_DENIED DelegateError carrying the rule and source', () => {
    const error = createAgentDeniedError('Explore', rule);
    expect(DelegateError.hasCode(error, 'AGENT_DENIED')).toBe(true);
    expect(error.message).toBe(formatAgentDeniedMessage('Explore', rule));
    expect(error.details).toMatchObject({
      agentType: 'Explore',
      rule: 'Agent(Explore)',
      source: 'projectSettings',
    });
  });
});
