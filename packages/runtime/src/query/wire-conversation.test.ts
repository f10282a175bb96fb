import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  type AssistantMessage,
  type ContentBlock,
  type Message,
  createSystemMessage,
  createUserMessage,
  createUuid,
} from '@delegate/core';
import { MISSING_TOOL_RESULT_TEXT } from './normalize-messages.js';
import { WireConversation } from './wire-conversation.js';

function assistant(content: ContentBlock[]): AssistantMessage {
  return {
    type: 'assistant',
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    message: {
      id: 'msg',
      role: 'assistant',
      model: 'm',
      content,
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  };
}

const ids = ['t1', 't2', 't3', 't4'];

// Messages as a loop sees them: prompts, notifications, tool calls (some unanswered), results
// (some for calls that do not exist), empty texts, cache markers, system notes.
const messageArbitrary: fc.Arbitrary<Message> = fc.oneof(
  fc.string({ maxLength: 3 }).map((text) => createUserMessage({ content: text })),
  fc
    .subarray(ids, { minLength: 1 })
    .map((calls) =>
      assistant(calls.map((id) => ({ type: 'tool_use', id, name: 'Read', input: {} }))),
    ),
  fc.string({ maxLength: 3 }).map((text) => assistant([{ type: 'text', text }])),
  fc.subarray(ids, { minLength: 1 }).map((answered) =>
    createUserMessage({
      content: answered.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })),
    }),
  ),
  fc.constant(
    createUserMessage({
      content: [{ type: 'text', text: 'marked', cache_control: { type: 'ephemeral' } }],
    }),
  ),
  fc.constant(createSystemMessage('not for the model')),
);

type Wire = ReturnType<WireConversation['messages']>;

/** The API's rules, checked independently of the code under test. */
function checkWellFormed(wire: Wire): void {
  for (let index = 0; index < wire.length; index++) {
    const message = wire[index]!;
    expect(message.content.length).toBeGreaterThan(0);
    if (index > 0) expect(message.role).not.toBe(wire[index - 1]!.role);
    for (const block of message.content) {
      if (block.type === 'text') expect(block.text.length).toBeGreaterThan(0);
      expect('cache_control' in block).toBe(false);
    }
    const previous = wire[index - 1];
    const calls =
      previous?.role === 'assistant'
        ? previous.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []))
        : [];
    const results = message.content.flatMap((block) =>
      block.type === 'tool_result' ? [block.tool_use_id] : [],
    );
    if (message.role === 'user') {
      // Every call of the previous message is answered once, and nothing else is.
      expect([...results].sort()).toEqual([...new Set(calls)].sort());
      // Results open the turn.
      const firstOther = message.content.findIndex((block) => block.type !== 'tool_result');
      if (firstOther !== -1)
        expect(message.content.slice(firstOther).some((b) => b.type === 'tool_result')).toBe(false);
    }
  }
  const last = wire[wire.length - 1];
  if (last?.role === 'assistant')
    expect(last.content.some((block) => block.type === 'tool_use')).toBe(false);
}

describe('WireConversation', () => {
  it('keeps any sequence of appended messages well formed for the API', () => {
    fc.assert(
      fc.property(
        fc.array(messageArbitrary, { maxLength: 6 }),
        fc.array(messageArbitrary, { maxLength: 12 }),
        (history, appended) => {
          const conversation = new WireConversation(history);
          for (const message of appended) {
            conversation.append(message);
            checkWellFormed(conversation.messages());
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never changes a wire message it handed out, except by replacing the last one', () => {
    const conversation = new WireConversation([createUserMessage({ content: 'go' })]);
    conversation.append(assistant([{ type: 'tool_use', id: 't1', name: 'Read', input: {} }]));
    const before = conversation.messages();
    const snapshot = JSON.stringify(before);
    conversation.append(
      createUserMessage({ content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] }),
    );
    conversation.append(createUserMessage({ content: 'a queued notification' }));
    expect(JSON.stringify(before)).toBe(snapshot);
    const after = conversation.messages();
    expect(after[0]).toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    expect(after[2]!.content.map((block) => block.type)).toEqual(['tool_result', 'text']);
  });

  it('answers calls a conversation ends on, without storing the stand-in', () => {
    const conversation = new WireConversation([createUserMessage({ content: 'go' })]);
    conversation.append(assistant([{ type: 'tool_use', id: 't9', name: 'Read', input: {} }]));
    const wire = conversation.messages();
    expect(wire.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 't9',
          content: [{ type: 'text', text: MISSING_TOOL_RESULT_TEXT }],
          is_error: true,
        },
      ],
    });
    expect(conversation.length).toBe(2);
  });
});
