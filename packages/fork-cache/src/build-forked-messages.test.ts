import { type ContentBlock, type Message, type UserMessage } from '@delegate/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertSharedPrefix } from './assert-shared-prefix.js';
import { buildChildMessage } from './build-child-message.js';
import { buildForkedMessages } from './build-forked-messages.js';
import { diagnoseCacheBreak } from './diagnose-cache-break.js';
import {
  type CacheKeyRequest,
  MESSAGE_PREFIX_OFFSET,
  fingerprintRequest,
} from './fingerprint-request.js';
import { FORK_PLACEHOLDER_RESULT } from './fork-constants.js';
import {
  assistantMessage,
  forkingAssistantMessage,
  parentHistory,
  toRequest,
} from './__fixtures__/parent-conversation.js';

const directives = [
  'Profile loadConfig and report the slowest call.',
  'Find out why config.test.ts fails one run in ten.',
  'Check whether the parsed-config cache is ever invalidated.',
];

function userContent(message: Message | undefined): ContentBlock[] {
  if (message?.type !== 'user' || typeof message.message.content === 'string') {
    throw new Error('expected a user message with content blocks');
  }
  return message.message.content;
}

describe('buildForkedMessages', () => {
  it('gives three forks requests that match up to the last block of the last message', () => {
    const history = parentHistory();
    const parentTurn = forkingAssistantMessage();
    const requests = directives.map((directive) =>
      toRequest([...history, ...buildForkedMessages(directive, parentTurn)]),
    );
    const fingerprints = requests.map((request) => fingerprintRequest(request));
    const lastMessageIndex = history.length + 1;

    for (const fingerprint of fingerprints.slice(1)) {
      const reference = fingerprints[0];
      expect(fingerprint.tools.hash).toBe(reference?.tools.hash);
      expect(fingerprint.system.hash).toBe(reference?.system.hash);
      // Every prefix link up to and including the forked assistant message is shared.
      expect(fingerprint.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET + lastMessageIndex)).toEqual(
        reference?.prefixHash.slice(0, MESSAGE_PREFIX_OFFSET + lastMessageIndex),
      );
      const lastBlocks = fingerprint.messages[lastMessageIndex]?.blocks ?? [];
      const referenceBlocks = reference?.messages[lastMessageIndex]?.blocks ?? [];
      expect(lastBlocks).toHaveLength(4);
      expect(lastBlocks.slice(0, 3)).toEqual(referenceBlocks.slice(0, 3));
      expect(lastBlocks[3]?.hash).not.toBe(referenceBlocks[3]?.hash);
    }

    for (const [left, right] of [
      [0, 1],
      [0, 2],
      [1, 2],
    ] as const) {
      const diagnosis = diagnoseCacheBreak(fingerprints[left]!, fingerprints[right]!);
      expect(diagnosis).toMatchObject({
        identical: false,
        firstDifference: { part: 'message', messageIndex: lastMessageIndex, blockIndex: 3 },
        sharedPrefixMessages: lastMessageIndex,
      });
    }
    expect(() => assertSharedPrefix(requests, { upToLastBlock: true })).not.toThrow();
  });

  it("lets a fork read everything the parent's previous request cached", () => {
    const history = parentHistory();
    const parentRequest = toRequest(history);
    const forkRequest = toRequest([
      ...history,
      ...buildForkedMessages(directives[0]!, forkingAssistantMessage()),
    ]);
    const diagnosis = diagnoseCacheBreak(parentRequest, forkRequest);
    expect(diagnosis).toMatchObject({
      identical: false,
      firstDifference: { part: 'message', messageIndex: history.length },
      sharedPrefixMessages: history.length,
    });
  });

  it('keeps the whole assistant message under a new uuid and answers every tool_use with the placeholder', () => {
    const parentTurn = forkingAssistantMessage();
    const [forkedAssistant, resultMessage, ...rest] = buildForkedMessages(
      'Audit the tests.',
      parentTurn,
    );
    expect(rest).toEqual([]);
    expect(forkedAssistant?.type).toBe('assistant');
    expect(forkedAssistant?.uuid).not.toBe(parentTurn.uuid);
    if (forkedAssistant?.type !== 'assistant') throw new Error('expected an assistant message');
    expect(forkedAssistant.message).toEqual(parentTurn.message);
    expect(forkedAssistant.message.content.map((block) => block.type)).toEqual([
      'thinking',
      'text',
      'tool_use',
      'tool_use',
      'tool_use',
    ]);

    const content = userContent(resultMessage);
    expect(content.slice(0, 3)).toEqual(
      ['toolu_fork_1', 'toolu_fork_2', 'toolu_fork_3'].map((id) => ({
        type: 'tool_result',
        tool_use_id: id,
        content: [{ type: 'text', text: FORK_PLACEHOLDER_RESULT }],
      })),
    );
    expect(content[3]).toEqual({ type: 'text', text: buildChildMessage('Audit the tests.') });
  });

  it('never changes the parent assistant message, even when the fork edits its copy', () => {
    const parentTurn = forkingAssistantMessage();
    const before = structuredClone(parentTurn);
    const [forkedAssistant] = buildForkedMessages('Profile the loader.', parentTurn);
    if (forkedAssistant?.type !== 'assistant') throw new Error('expected an assistant message');
    expect(forkedAssistant.message.content).not.toBe(parentTurn.message.content);

    // A runtime marks the child's last blocks for caching; the parent must not see it.
    const lastBlock = forkedAssistant.message.content.at(-1);
    if (lastBlock?.type === 'tool_use') lastBlock.cache_control = { type: 'ephemeral' };
    forkedAssistant.message.content.push({ type: 'text', text: 'extra' });
    expect(parentTurn).toEqual(before);
  });

  it("drops the parent's cache breakpoints from the copy without changing its cache key", () => {
    const parentTurn = assistantMessage([
      { type: 'thinking', thinking: 'Split the work.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque-payload' },
      { type: 'text', text: 'Forking.', cache_control: { type: 'ephemeral' } },
      {
        type: 'tool_use',
        id: 'toolu_a',
        name: 'Agent',
        input: { prompt: 'a', cache_control: 'kept: this is tool input' },
        cache_control: { type: 'ephemeral', ttl: '1h' },
      },
    ]);
    const before = structuredClone(parentTurn);
    const [forked] = buildForkedMessages('Étudier le cache 🚀', parentTurn);
    if (forked?.type !== 'assistant') throw new Error('expected an assistant message');
    const content = forked.message.content;
    expect(content.map((block) => block.type)).toEqual([
      'thinking',
      'redacted_thinking',
      'text',
      'tool_use',
    ]);
    expect(content.filter((block) => 'cache_control' in block)).toEqual([]);
    expect(content[3]).toMatchObject({ input: { cache_control: 'kept: this is tool input' } });
    expect(parentTurn).toEqual(before);
    // The breakpoints were never part of the key: both turns fingerprint alike.
    const asRequest = (blocks: unknown[]): CacheKeyRequest => ({
      model: 'm',
      messages: [{ role: 'assistant', content: blocks }],
    });
    expect(fingerprintRequest(asRequest(content)).prefixHash).toEqual(
      fingerprintRequest(asRequest(parentTurn.message.content)).prefixHash,
    );
  });

  it('returns a single user message with the directive when there is no tool_use', () => {
    const parentTurn = assistantMessage([
      { type: 'thinking', thinking: 'Nothing to call.', signature: 'sig' },
      { type: 'text', text: 'Done.' },
    ]);
    const before = structuredClone(parentTurn);
    const messages = buildForkedMessages('Summarize the findings.', parentTurn);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.type).toBe('user');
    expect(userContent(messages[0])).toEqual([
      { type: 'text', text: buildChildMessage('Summarize the findings.') },
    ]);
    expect(parentTurn).toEqual(before);
  });

  it('makes the outputs for any two directives differ only in the final text block (property)', () => {
    const parentTurn = forkingAssistantMessage();
    fc.assert(
      fc.property(fc.string(), fc.string(), (first, second) => {
        const left = buildForkedMessages(first, parentTurn);
        const right = buildForkedMessages(second, parentTurn);
        expect(left).toHaveLength(2);
        expect(right).toHaveLength(2);
        if (left[0]?.type !== 'assistant' || right[0]?.type !== 'assistant')
          throw new Error('expected assistant');
        expect(left[0].message).toEqual(right[0].message);
        const leftContent = userContent(left[1]);
        const rightContent = userContent(right[1]);
        expect(leftContent.slice(0, -1)).toEqual(rightContent.slice(0, -1));
        expect(leftContent.at(-1)).toEqual({ type: 'text', text: buildChildMessage(first) });
        expect(rightContent.at(-1)).toEqual({ type: 'text', text: buildChildMessage(second) });

        const requests = [left, right].map((messages) =>
          toRequest([...parentHistory(), ...messages]),
        );
        expect(() => assertSharedPrefix(requests)).not.toThrow();
        const diagnosis = diagnoseCacheBreak(requests[0]!, requests[1]!);
        if (first === second) {
          expect(diagnosis.identical).toBe(true);
        } else {
          expect(diagnosis).toMatchObject({ identical: false, firstDifference: { blockIndex: 3 } });
        }
      }),
      { numRuns: 200 },
    );
  });

  it('creates a fresh user message id for every fork while the content stays equal', () => {
    const parentTurn = forkingAssistantMessage();
    const first = buildForkedMessages('a', parentTurn)[1] as UserMessage;
    const second = buildForkedMessages('a', parentTurn)[1] as UserMessage;
    expect(first.uuid).not.toBe(second.uuid);
    expect(first.message).toEqual(second.message);
  });
});

describe('buildChildMessage', () => {
  it('ends with the directive and starts with the rules tag', () => {
    const text = buildChildMessage('Count the TODOs in src/.');
    expect(text.startsWith('<fork-worker-rules>\n')).toBe(true);
    expect(text.endsWith('\nYour directive: Count the TODOs in src/.')).toBe(true);
    expect(text).toContain('</fork-worker-rules>');
  });

  it('states every fork rule the worker must follow', () => {
    const text = buildChildMessage('x');
    for (const expected of [
      /do not start sub-agents/i,
      /do not ask questions/i,
      /commit/i,
      /commit hash/i,
      /no text between tool calls/i,
      /one sentence at most/i,
      /under 500 words/i,
      /"Scope:"/,
      /^Scope: /m,
      /^Result: /m,
      /^Key files: /m,
      /^Files changed: /m,
      /^Issues: /m,
    ]) {
      expect(text).toMatch(expected);
    }
  });

  it('is the same for every child up to the directive', () => {
    const [head] = buildChildMessage('first').split('Your directive: ');
    const [otherHead] = buildChildMessage('second task').split('Your directive: ');
    expect(head).toBe(otherHead);
  });
});
