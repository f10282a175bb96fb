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

/** Longest report a sub-agent returns, in characters; a longer one is cut and says so. */
export const MAX_REPORT_CHARS = 100_000;

/**
 * Caps a report at {@link MAX_REPORT_CHARS} characters (never splitting a surrogate pair),
 * ending a cut report with a line that says how much was left out.
 */
export function capReport(text: string, maxChars = MAX_REPORT_CHARS): string {
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}\n\n[The report was cut: ${end.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters shown.]`;
}

/** The result of a finished sub-agent run. */
export type AgentToolResult = {
  /** Agent id (for SendMessage). */
  agentId: string;
  /** Agent type. */
  agentType: string;
  /** The report: the last assistant text, capped at {@link MAX_REPORT_CHARS} characters in all. */
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

/** The text blocks of the last assistant message that has any. */
function lastReportBlocks(messages: readonly Message[]): TextBlock[] {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type !== 'assistant') continue;
    const text = message.message.content.filter(
      (block): block is TextBlock => block.type === 'text',
    );
    if (text.length > 0) return text;
  }
  return [];
}

/** The report blocks, capped in all at {@link MAX_REPORT_CHARS} characters. */
function cappedContent(blocks: readonly TextBlock[]): TextBlock[] {
  const whole = blocks.map((block) => block.text).join('\n');
  if (whole.length <= MAX_REPORT_CHARS)
    return blocks.map((block) => ({ type: 'text', text: block.text }));
  return [{ type: 'text', text: capReport(whole) }];
}

/**
 * Turns a sub-agent's messages into its result: the text of the last assistant message,
 * or, when that one holds only tool calls (the loop stopped mid-turn), the text of the
 * latest assistant message that has some. A report over {@link MAX_REPORT_CHARS}
 * characters is cut, with a line saying so.
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
  const usage = sumUsage(messages);
  const result: AgentToolResult = {
    agentId,
    agentType: metadata.agentType,
    content: cappedContent(lastReportBlocks(messages)),
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
