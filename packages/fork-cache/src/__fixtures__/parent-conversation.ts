import { type AssistantMessage, type ContentBlock, type Message, createUserMessage } from '@delegate/core';
import { type CacheKeyRequest } from '../fingerprint-request.js';

const usage = { input_tokens: 1200, output_tokens: 340, cache_read_input_tokens: 900 };

/** Builds an assistant message as the API would have returned it. */
export function assistantMessage(content: ContentBlock[], id = 'msg_fixture'): AssistantMessage {
  return {
    type: 'assistant',
    uuid: `uuid-${id}`,
    timestamp: '2025-01-01T00:00:00.000Z',
    message: {
      id,
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content,
      stop_reason: 'tool_use',
      usage,
    },
  };
}

/** The parent's conversation before the turn that forks. */
export function parentHistory(): Message[] {
  return [
    createUserMessage({ content: 'The config loader is slow and its tests are flaky. Find out why and fix it.' }),
    assistantMessage(
      [
        { type: 'text', text: 'Let me look at the loader first.' },
        { type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: '/repo/src/config.ts' } },
      ],
      'msg_1',
    ),
    createUserMessage({
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_read_1',
          content: [{ type: 'text', text: 'export function loadConfig() { /* … */ }' }],
        },
      ],
    }),
  ];
}

/** The parent's turn that forks: thinking, text and three Agent calls. */
export function forkingAssistantMessage(): AssistantMessage {
  return assistantMessage(
    [
      { type: 'thinking', thinking: 'Three independent areas; fork one worker for each.', signature: 'sig-abc' },
      { type: 'text', text: 'I will split this into three parallel investigations.' },
      { type: 'tool_use', id: 'toolu_fork_1', name: 'Agent', input: { prompt: 'Profile the loader' } },
      { type: 'tool_use', id: 'toolu_fork_2', name: 'Agent', input: { prompt: 'Audit the tests' } },
      { type: 'tool_use', id: 'toolu_fork_3', name: 'Agent', input: { prompt: 'Check the cache layer' } },
    ],
    'msg_2',
  );
}

const tools = [
  {
    name: 'Read',
    description: 'Reads a file.',
    input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
  },
  {
    name: 'Agent',
    description: 'Starts a sub-agent.',
    input_schema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
];

/**
 * Turns a conversation into a request body the way a runtime would, with a cache
 * breakpoint on the last block of the last message (where it moves every turn).
 */
export function toRequest(messages: readonly Message[], overrides: Partial<CacheKeyRequest> = {}): CacheKeyRequest {
  const apiMessages = messages.flatMap((message) =>
    message.type === 'user' || message.type === 'assistant'
      ? [{ role: message.message.role, content: structuredClone(message.message.content) }]
      : [],
  );
  const last = apiMessages.at(-1);
  if (last && Array.isArray(last.content)) {
    const lastBlock = last.content.at(-1);
    if (lastBlock && lastBlock.type !== 'thinking' && lastBlock.type !== 'redacted_thinking') {
      lastBlock.cache_control = { type: 'ephemeral' };
    }
  }
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 32_000,
    system: [
      { type: 'text', text: 'You are Delegate, a coding agent.' },
      { type: 'text', text: 'Working directory: /repo', cache_control: { type: 'ephemeral' } },
    ],
    tools,
    thinking: { type: 'enabled', budget_tokens: 8000 },
    messages: apiMessages,
    ...overrides,
  };
}
