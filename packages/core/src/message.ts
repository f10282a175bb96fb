import { z } from 'zod';
import { ContentBlock, type TextBlock } from './content.js';
import { createUuid } from './ids.js';
import { Usage } from './usage.js';

const MessageMeta = {
  /** Unique id of this message in its transcript. */
  uuid: z.string(),
  /** ISO 8601 time the message was created. */
  timestamp: z.string(),
  /** Id of the agent whose conversation holds the message; absent on the main thread. */
  agentId: z.string().optional(),
};

/** A user turn: the prompt, tool results, or notifications queued for the model. */
export const UserMessage = z.object({
  ...MessageMeta,
  /** Message discriminator. */
  type: z.literal('user'),
  /** The wire message. */
  message: z.object({
    /** Always `user`. */
    role: z.literal('user'),
    /** A string or content blocks (text and tool results). */
    content: z.union([z.string(), z.array(ContentBlock)]),
  }),
  /** True for messages Delegate adds on its own (reminders, notifications, repairs). */
  isMeta: z.boolean().optional(),
});
export type UserMessage = z.infer<typeof UserMessage>;

/** An assistant turn as the API returned it. */
export const AssistantMessage = z.object({
  ...MessageMeta,
  /** Message discriminator. */
  type: z.literal('assistant'),
  /** The `request-id` header of the response, when known. */
  requestId: z.string().optional(),
  /** The wire message with the API's metadata. */
  message: z.object({
    /** API message id (`msg_…`). */
    id: z.string(),
    /** Always `assistant`. */
    role: z.literal('assistant'),
    /** Model that produced the message. */
    model: z.string(),
    /** Content blocks: text, thinking, tool calls. */
    content: z.array(ContentBlock),
    /** Why generation stopped (`end_turn`, `tool_use`, `max_tokens`, …). */
    stop_reason: z.string().nullable(),
    /** Token usage of the request that produced this message. */
    usage: Usage,
  }),
  /** Set when this message is a synthetic error placeholder rather than model output. */
  isApiErrorMessage: z.boolean().optional(),
});
export type AssistantMessage = z.infer<typeof AssistantMessage>;

/** A system note for the transcript and the UI; never sent to the model. */
export const SystemMessage = z.object({
  ...MessageMeta,
  /** Message discriminator. */
  type: z.literal('system'),
  /** Kind of note, such as `info`, `warning` or `compact`. */
  subtype: z.string(),
  /** Human-readable text. */
  content: z.string(),
});
export type SystemMessage = z.infer<typeof SystemMessage>;

/** Progress reported by a running tool (for example a sub-agent's messages). */
export const ProgressMessage = z.object({
  ...MessageMeta,
  /** Message discriminator. */
  type: z.literal('progress'),
  /** Id of the tool call the progress belongs to. */
  toolUseId: z.string(),
  /** Tool-specific progress payload. */
  data: z.unknown(),
});
export type ProgressMessage = z.infer<typeof ProgressMessage>;

/** Any message in a Delegate conversation or transcript. */
export const Message = z.discriminatedUnion('type', [
  UserMessage,
  AssistantMessage,
  SystemMessage,
  ProgressMessage,
]);
export type Message = z.infer<typeof Message>;

/** Creates a user message with a fresh uuid and timestamp. */
export function createUserMessage(options: {
  content: string | ContentBlock[];
  agentId?: string;
  isMeta?: boolean;
}): UserMessage {
  const message: UserMessage = {
    type: 'user',
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    message: { role: 'user', content: options.content },
  };
  if (options.agentId !== undefined) message.agentId = options.agentId;
  if (options.isMeta) message.isMeta = true;
  return message;
}

/** Creates a system note with a fresh uuid and timestamp. */
export function createSystemMessage(content: string, subtype = 'info'): SystemMessage {
  return {
    type: 'system',
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    subtype,
    content,
  };
}

/** Returns the text blocks of a message's content, whatever its form. */
export function getTextBlocks(content: string | readonly ContentBlock[]): TextBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.filter((block): block is TextBlock => block.type === 'text');
}

/** Returns the concatenated text of a message's content. */
export function getText(content: string | readonly ContentBlock[]): string {
  return getTextBlocks(content)
    .map((block) => block.text)
    .join('\n');
}

/** Returns the last assistant message of a list, if any. */
export function getLastAssistantMessage(
  messages: readonly Message[],
): AssistantMessage | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type === 'assistant') return message;
  }
  return undefined;
}
