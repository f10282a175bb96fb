import { describe, expect, it } from 'vitest';
import { createSystemMessage, createUserMessage } from '@delegate/core';
import {
  MISSING_TOOL_RESULT_TEXT,
  ensureToolResultPairing,
  toWireMessages,
} from './normalize-messages.js';
import { buildMessagesRequest } from './build-messages-request.js';

describe('message normalization', () => {
  it('drops system notes and empty text, and merges same-role neighbours with tool results first', () => {
    const wire = toWireMessages([
      createUserMessage({ content: 'hello' }),
      createSystemMessage('not for the model'),
      createUserMessage({ content: [{ type: 'text', text: '' }] }),
      createUserMessage({
        content: [
          { type: 'text', text: 'note' },
          { type: 'tool_result', tool_use_id: 't1', content: 'r' },
        ],
      }),
    ]);
    expect(wire).toHaveLength(1);
    expect(wire[0]!.content.map((block) => block.type)).toEqual(['tool_result', 'text', 'text']);
  });

  it('answers dangling tool calls and drops orphan tool results', () => {
    const repaired = ensureToolResultPairing([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'go' },
          { type: 'tool_result', tool_use_id: 'orphan', content: 'x' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'a', name: 'Read', input: {} },
          { type: 'tool_use', id: 'b', name: 'Read', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'b', content: 'ok' },
          { type: 'text', text: 'more' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'Read', input: {} }] },
    ]);
    expect(repaired[0]!.content).toEqual([{ type: 'text', text: 'go' }]);
    expect(
      repaired[2]!.content.map((block) =>
        block.type === 'tool_result' ? block.tool_use_id : block.type,
      ),
    ).toEqual(['b', 'a', 'text']);
    expect(repaired[4]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'c',
          content: [{ type: 'text', text: MISSING_TOOL_RESULT_TEXT }],
          is_error: true,
        },
      ],
    });
  });
});

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
