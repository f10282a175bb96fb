import {
  type CompleteUsage,
  type Message,
  type TextBlock,
  DelegateError,
  Usage,
  addUsage,
  emptyUsage,
  getLastAssistantMessage,
  totalTokens,
} from '@delegate/core';
import { z } from 'zod';

/** Schema of a finished sub-agent's result, checked before it is returned to the caller. */
export const AgentToolResultSchema = z.object({
  agentId: z.string().min(1),
  agentType: z.string().min(1),
  content: z.array(z.object({ type: z.literal('text'), text: z.string() })),
  totalDurationMs: z.number().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  totalToolUseCount: z.number().int().nonnegative(),
  usage: Usage,
});

/** The result of a finished sub-agent run. */
export type AgentToolResult = {
  /** Agent id (for SendMessage). */
  agentId: string;
  /** Agent type. */
  agentType: string;
  /** The report: the last assistant text. */
  content: TextBlock[];
  /** Wall-clock duration. */
  totalDurationMs: number;
  /** Context size at the end: all input and output tokens of the last response. */
  totalTokens: number;
  /** Tool calls made. */
  totalToolUseCount: number;
  /** Usage summed over every response. */
  usage: CompleteUsage;
};

/** Counts the `tool_use` blocks of the assistant messages. */
export function countToolUses(messages: readonly Message[]): number {
  let count = 0;
  for (const message of messages) {
    if (message.type !== 'assistant') continue;
    for (const block of message.message.content) if (block.type === 'tool_use') count++;
  }
  return count;
}

/** Sums the usage of every assistant message. */
export function sumUsage(messages: readonly Message[]): CompleteUsage {
  let usage = emptyUsage();
  for (const message of messages)
    if (message.type === 'assistant') usage = addUsage(usage, message.message.usage);
  return usage;
}

/**
 * Turns a sub-agent's messages into its result: the text of the last assistant message,
 * or, when that one holds only tool calls (the loop stopped mid-turn), the text of the
 * latest assistant message that has some.
 */
export function finalizeAgentTool(
  messages: readonly Message[],
  agentId: string,
  metadata: { agentType: string; startTime: number },
): AgentToolResult {
  const last = getLastAssistantMessage(messages);
  if (!last) {
    throw new DelegateError(
      'TOOL_FAILED',
      `Agent ${agentId} (${metadata.agentType}) produced no assistant message.`,
    );
  }
  let content = last.message.content.filter((block): block is TextBlock => block.type === 'text');
  if (content.length === 0) {
    for (let index = messages.length - 1; index >= 0; index--) {
      const message = messages[index];
      if (message?.type !== 'assistant') continue;
      const text = message.message.content.filter(
        (block): block is TextBlock => block.type === 'text',
      );
      if (text.length > 0) {
        content = text;
        break;
      }
    }
  }
  const usage = sumUsage(messages);
  const result: AgentToolResult = {
    agentId,
    agentType: metadata.agentType,
    content: content.map((block) => ({ type: 'text', text: block.text })),
    totalDurationMs: Date.now() - metadata.startTime,
    totalTokens: totalTokens(last.message.usage),
    totalToolUseCount: countToolUses(messages),
    usage,
  };
  const checked = AgentToolResultSchema.safeParse(result);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new DelegateError(
      'TOOL_FAILED',
      `Agent ${agentId} produced an invalid result (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}).`,
    );
  }
  return result;
}
