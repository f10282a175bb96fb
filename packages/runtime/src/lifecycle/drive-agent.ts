import {
  type Message,
  completeUsage,
  addUsage,
  emptyUsage,
  type CompleteUsage,
  totalTokens,
} from '@delegate/core';
import type { AgentRecord, AgentRuntime } from '../session/agent-runtime.js';
import { query } from '../query/query.js';

/** Options of `driveAgent`. */
export type DriveAgentOptions = {
  /** Messages to add to the agent's conversation before it runs. */
  newMessages: readonly Message[];
  /** Leading messages of the starting conversation its transcript already holds (a resume). */
  alreadyRecorded?: number;
  /** Called once, when the first response of the run begins streaming. */
  onFirstResponse?: () => void;
  /** Called after each message, with the running totals. */
  onProgress?: (progress: {
    messageCount: number;
    toolUseCount: number;
    usage: CompleteUsage;
    lastActivity?: string;
  }) => void;
};

function describeActivity(message: Message): string | undefined {
  if (message.type !== 'assistant') return undefined;
  const toolUse = [...message.message.content].reverse().find((block) => block.type === 'tool_use');
  if (toolUse?.type === 'tool_use') return `called ${toolUse.name}`;
  const text = message.message.content.find((block) => block.type === 'text');
  return text?.type === 'text' ? text.text.slice(0, 120) : undefined;
}

/**
 * Runs one agent's loop over its record: appends the new messages, streams the query,
 * keeps the record's conversation, transcript, task and events up to date, and yields
 * each message. Returns how the loop ended; throws what the loop throws.
 */
export async function* driveAgent(
  runtime: AgentRuntime,
  record: AgentRecord,
  options: DriveAgentOptions,
): AsyncGenerator<Message, 'completed' | 'aborted'> {
  const start = record.messages.length;
  record.messages.push(...options.newMessages);
  if (runtime.transcript) {
    // The first run records the whole starting conversation (a fork's inherited history
    // included), so the transcript alone is enough to resume the agent.
    const fresh = start === 0 ? record.messages : options.newMessages;
    await runtime.transcript.append(fresh.slice(options.alreadyRecorded ?? 0), record.agentId);
  }
  let firstResponse = false;
  let toolUseCount = 0;
  let usage = emptyUsage();
  let messageCount = 0;
  const notifyFirst = (): void => {
    if (firstResponse) return;
    firstResponse = true;
    options.onFirstResponse?.();
  };
  try {
    const generator = query({
      client: runtime.client,
      messages: [...record.messages],
      systemPrompt: record.systemPrompt,
      ...(record.userContext ? { userContext: record.userContext } : {}),
      ...(record.systemContext ? { systemContext: record.systemContext } : {}),
      toolUseContext: record.context,
      canUseTool: record.canUseTool,
      querySource: record.querySource,
      ...(record.maxTurns !== undefined ? { maxTurns: record.maxTurns } : {}),
      ...(record.effort ? { effort: record.effort } : {}),
      ...(record.toolDefinitions ? { toolDefinitions: record.toolDefinitions } : {}),
      drainQueuedMessages: () => record.inbox.splice(0, record.inbox.length),
    });
    for (;;) {
      const next = await generator.next();
      if (next.done) return next.value.reason;
      const event = next.value;
      if (event.type === 'stream_event') {
        if (event.event.type === 'message_start') notifyFirst();
        continue;
      }
      if (event.type === 'stream_request_start') continue;
      record.messages.push(event);
      messageCount++;
      if (runtime.transcript && event.type !== 'system')
        await runtime.transcript.append([event], record.agentId);
      if (event.type === 'assistant') {
        usage = addUsage(usage, completeUsage(event.message.usage));
        toolUseCount += event.message.content.filter((block) => block.type === 'tool_use').length;
        const lastActivity = describeActivity(event);
        options.onProgress?.({
          messageCount,
          toolUseCount,
          usage,
          ...(lastActivity ? { lastActivity } : {}),
        });
        runtime.events.emit({
          type: 'agent.progress',
          agentId: record.agentId,
          timestamp: new Date().toISOString(),
          messageCount,
          toolUseCount,
          tokens: totalTokens(event.message.usage),
          ...(lastActivity ? { lastActivity } : {}),
        });
      }
      yield event;
    }
  } finally {
    notifyFirst();
  }
}
