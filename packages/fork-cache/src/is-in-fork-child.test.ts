import { type Message, createUserMessage } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { buildChildMessage } from './build-child-message.js';
import { buildForkedMessages } from './build-forked-messages.js';
import { FORK_BOILERPLATE_TAG } from './fork-constants.js';
import { isInForkChild } from './is-in-fork-child.js';
import {
  assistantMessage,
  forkingAssistantMessage,
  parentHistory,
} from './__fixtures__/parent-conversation.js';

const rulesText = buildChildMessage('Look at the parser.');

describe('isInForkChild', () => {
  it('is false for an ordinary conversation', () => {
    expect(isInForkChild(parentHistory())).toBe(false);
    expect(isInForkChild([])).toBe(false);
  });

  it("is true once a fork's messages are in the history", () => {
    const messages = [
      ...parentHistory(),
      ...buildForkedMessages('Look at the parser.', forkingAssistantMessage()),
    ];
    expect(isInForkChild(messages)).toBe(true);
  });

  it('finds the rules in string content and in text blocks', () => {
    expect(isInForkChild([createUserMessage({ content: rulesText })])).toBe(true);
    expect(
      isInForkChild([
        createUserMessage({
          content: [
            { type: 'text', text: 'Earlier note.' },
            { type: 'text', text: rulesText },
          ],
        }),
      ]),
    ).toBe(true);
  });

  it('is not fooled by a tool result that quotes the rules (a file read by a tool)', () => {
    const messages: Message[] = [
      createUserMessage({ content: 'Read the fork module.' }),
      createUserMessage({
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: rulesText },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: [{ type: 'text', text: rulesText }],
          },
        ],
      }),
    ];
    expect(isInForkChild(messages)).toBe(false);
  });

  it('is not fooled by an assistant message that writes the rules out', () => {
    const messages: Message[] = [
      createUserMessage({ content: 'Show me the fork rules.' }),
      assistantMessage([{ type: 'text', text: rulesText }]),
    ];
    expect(isInForkChild(messages)).toBe(false);
  });

  it('ignores a passing mention of the tag inside prose', () => {
    const mention = `What does the <${FORK_BOILERPLATE_TAG}> tag in the prompt do?`;
    expect(isInForkChild([createUserMessage({ content: mention })])).toBe(false);
  });
});
