import { describe, expect, it } from 'vitest';
import { type AssistantMessage, createUserMessage, createUuid } from '@delegate/core';
import { customAgent } from '../__fixtures__/sim-helpers.js';
import { forkMessages, freshAgentMessages } from './agent-messages.js';

describe('agent messages', () => {
  it('opens a fresh agent with its initialPrompt', () => {
    const agent = customAgent(
      '---\nname: s\ndescription: d\ninitialPrompt: First read the notes.\n---\nx',
    );
    const [message] = freshAgentMessages({ agent, prompt: 'Fix it', agentId: 'a1' });
    expect(message?.type === 'user' && message.message.content).toBe(
      'First read the notes.\n\nFix it',
    );
  });

  it("gives a fork the parent's history without the calling message, then the forked messages", () => {
    const caller: AssistantMessage = {
      type: 'assistant',
      uuid: createUuid(),
      timestamp: new Date().toISOString(),
      message: {
        id: 'msg',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'tool_use', id: 't1', name: 'Agent', input: {} }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    };
    const history = [createUserMessage({ content: 'start' }), caller];
    const messages = forkMessages({
      history,
      parentAssistant: caller,
      prompt: 'check A',
      worktree: { parentCwd: '/repo', worktreeCwd: '/tmp/wt' },
    });
    expect(messages[0]).toBe(history[0]);
    expect(messages.filter((message) => message.uuid === caller.uuid)).toHaveLength(0);
    const last = JSON.stringify(messages.at(-1));
    expect(last).toContain('check A');
    expect(last).toContain('/tmp/wt');
  });
});
