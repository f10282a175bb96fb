import { describe, expect, it } from 'vitest';
import { buildMessagesRequest } from './build-messages-request.js';

describe('buildMessagesRequest', () => {
  const messages = [
    { role: 'user' as const, content: [{ type: 'text' as const, text: 'a' }] },
    { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'b' }] },
    {
      role: 'user' as const,
      content: [
        { type: 'text' as const, text: 'c' },
        { type: 'text' as const, text: 'd' },
      ],
    },
  ];

  it('marks the last system block and the last two blocks of the last message, never more than four', () => {
    const request = buildMessagesRequest({
      model: 'm',
      systemPrompt: ['one', 'two'],
      messages,
      tools: [],
    });
    const marked = JSON.stringify(request).match(/cache_control/g) ?? [];
    expect(marked).toHaveLength(3);
    expect(request.system?.[1]).toMatchObject({ cache_control: { type: 'ephemeral' } });
    expect(request.messages[2]!.content).toEqual([
      { type: 'text', text: 'c', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'd', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('marks copies of the last blocks and leaves the given messages unmarked', () => {
    const before = JSON.stringify(messages);
    const request = buildMessagesRequest({ model: 'm', systemPrompt: ['s'], messages, tools: [] });
    expect(JSON.stringify(messages)).toBe(before);
    expect(request.messages[0]).toBe(messages[0]);
    expect(request.messages[2]).not.toBe(messages[2]);
  });

  it('never marks a thinking block', () => {
    const request = buildMessagesRequest({
      model: 'm',
      systemPrompt: ['s'],
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'a' },
            { type: 'thinking', thinking: 't', signature: 's' },
          ],
        },
      ],
      tools: [],
    });
    expect(request.messages[0]!.content).toEqual([
      { type: 'text', text: 'a', cache_control: { type: 'ephemeral' } },
      { type: 'thinking', thinking: 't', signature: 's' },
    ]);
  });

  it('reads without writing a new tail when skipCacheWrite is set', () => {
    const request = buildMessagesRequest({
      model: 'm',
      systemPrompt: ['s'],
      messages,
      tools: [],
      skipCacheWrite: true,
    });
    expect(JSON.stringify(request.messages[2])).not.toContain('cache_control');
    expect(JSON.stringify(request.messages[1])).toContain('cache_control');
  });

  it('keeps the thinking budget below max_tokens, and an output cap changes the budget', () => {
    const base = {
      model: 'm',
      systemPrompt: ['s'],
      messages,
      tools: [],
      thinking: { type: 'enabled' as const, budgetTokens: 8000 },
    };
    const plain = buildMessagesRequest(base);
    const capped = buildMessagesRequest({ ...base, maxOutputTokens: 4000 });
    expect(plain.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    expect(plain.max_tokens).toBeGreaterThan(8000);
    expect(capped.max_tokens).toBe(4000);
    expect(capped.thinking).toEqual({ type: 'enabled', budget_tokens: 3999 });
  });
});
