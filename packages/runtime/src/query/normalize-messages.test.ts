import { describe, expect, it } from 'vitest';
import { createSystemMessage, createUserMessage } from '@delegate/core';
import {
  MISSING_TOOL_RESULT_TEXT,
  ensureToolResultPairing,
  toWireMessages,
} from './normalize-messages.js';

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
