import { type AssistantMessage, type ContentBlock, type Message } from '@delegate/core';
import { applyCacheBreakpoints } from '../apply-cache-breakpoints.js';
import { type CacheKeyMessage, type CacheKeyRequest } from '../fingerprint-request.js';
import { type BlockAddress } from '../message-blocks.js';
import { assistantMessage, toRequest } from './parent-conversation.js';

/** The parent's turn that forks `count` workers: optional thinking, a text, then the Agent calls. */
export function fanOutMessage(
  count: number,
  options: { thinking?: boolean } = {},
): AssistantMessage {
  const calls = Array.from({ length: count }, (_, index): ContentBlock => ({
    type: 'tool_use',
    id: `toolu_fork_${index}`,
    name: 'Agent',
    input: { description: `part ${index}`, prompt: `Audit part ${index} of the loader.` },
  }));
  return assistantMessage(
    [
      ...(options.thinking
        ? [{ type: 'thinking' as const, thinking: 'Split it up.', signature: 'sig-fan-out' }]
        : []),
      { type: 'text', text: `Forking ${count} workers.` },
      ...calls,
    ],
    `msg_fan_out_${count}`,
  );
}

/** The wire messages of a conversation (content as sent), without any breakpoint. */
export function wireMessages(messages: readonly Message[]): CacheKeyMessage[] {
  return messages.flatMap((message) =>
    message.type === 'user' || message.type === 'assistant'
      ? [{ role: message.message.role, content: structuredClone(message.message.content) }]
      : [],
  );
}

/** A request with the fixture's tools and system, and breakpoints on exactly the given blocks. */
export function requestWithBreakpoints(
  messages: readonly CacheKeyMessage[],
  breakpoints: readonly BlockAddress[],
): CacheKeyRequest {
  const base = toRequest([]);
  return { ...base, messages: applyCacheBreakpoints({ messages, breakpoints }) };
}

/** The address of the last block of message `messageIndex`. */
export function lastBlockOf(
  messages: readonly CacheKeyMessage[],
  messageIndex: number,
): BlockAddress {
  const content = messages[messageIndex]?.content ?? [];
  return { messageIndex, blockIndex: typeof content === 'string' ? 0 : content.length - 1 };
}
