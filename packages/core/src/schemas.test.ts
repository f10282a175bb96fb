import { describe, expect, it } from 'vitest';
import { AgentDefinition } from './agent-definition.js';
import { ContentBlock } from './content.js';
import { AgentEvent } from './events.js';
import { createAgentId } from './ids.js';
import {
  AssistantMessage,
  createUserMessage,
  getLastAssistantMessage,
  getText,
} from './message.js';

describe('wire-compatible schemas', () => {
  it('accepts the blocks @anthropic-ai/sdk returns, including cache_control', () => {
    const blocks = [
      { type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a' } },
      { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }] },
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
    ];
    for (const block of blocks) expect(ContentBlock.parse(block)).toEqual(block);
    expect(() => ContentBlock.parse({ type: 'image' })).toThrow();
  });

  it('parses an assistant message with usage', () => {
    const message = AssistantMessage.parse({
      type: 'assistant',
      uuid: 'u1',
      timestamp: new Date().toISOString(),
      message: {
        id: 'msg_1',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: 'done' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: null },
      },
    });
    expect(getLastAssistantMessage([createUserMessage({ content: 'q' }), message])).toBe(message);
    expect(getText(message.message.content)).toBe('done');
  });

  it('rejects an agent definition without a system prompt function', () => {
    const base = { agentType: 'x', whenToUse: 'y', source: 'built-in', baseDir: 'built-in' };
    expect(AgentDefinition.safeParse({ ...base, getSystemPrompt: () => 'p' }).success).toBe(true);
    expect(AgentDefinition.safeParse({ ...base, getSystemPrompt: 'p' }).success).toBe(false);
    expect(
      AgentDefinition.safeParse({ ...base, color: 'magenta', getSystemPrompt: () => '' }).success,
    ).toBe(false);
  });

  it('discriminates lifecycle events', () => {
    const event = AgentEvent.parse({
      type: 'agent.backgrounded',
      agentId: 'a1',
      timestamp: new Date().toISOString(),
      taskId: 't1',
    });
    expect(event.type).toBe('agent.backgrounded');
    expect(
      AgentEvent.safeParse({ type: 'agent.exploded', agentId: 'a', timestamp: '' }).success,
    ).toBe(false);
  });

  it('makes agent ids that are safe in paths', () => {
    expect(createAgentId('../../etc')).toMatch(/^aetc-[0-9a-f]{16}$/);
    expect(createAgentId()).toMatch(/^a[0-9a-f]{16}$/);
  });

  it('reduces an agent id label to at most 40 characters of [a-z0-9-]', () => {
    expect(createAgentId('Code Reviewer!')).toMatch(/^acode-reviewer-[0-9a-f]{16}$/);
    expect(createAgentId('x'.repeat(100))).toMatch(new RegExp(`^a${'x'.repeat(40)}-[0-9a-f]{16}$`));
    // A label with nothing usable left gives the plain form.
    expect(createAgentId('/../..')).toMatch(/^a[0-9a-f]{16}$/);
  });
});
