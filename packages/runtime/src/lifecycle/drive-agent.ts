import {
  type AssistantMessage,
  type CompleteUsage,
  type Message,
  type UserMessage,
  addUsage,
  completeUsage,
  emptyUsage,
  totalTokens,
} from '@delegate/core';
import type Anthropic from '@anthropic-ai/sdk';
import type { ForkLayout } from '@delegate/fork-cache';
import {
  AGENT_MCP_CONNECT_TIMEOUT_MS,
  type AgentMcpConnection,
  connectAgentMcpServers,
  withExtraTools,
  withoutDisallowed,
} from '../agent-tool/agent-mcp-servers.js';
import { query } from '../query/query.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import type { AgentRecord } from './agent-record.js';
import { createUsageGuard } from '../usage/usage-guard.js';
import { CacheDiagnoser } from './cache-diagnosis.js';
import {
  addResponseUsage,
  appendMessages,
  returnToInbox,
  takeInbox,
} from './record-transitions.js';

/** Running totals of one run, as `onProgress` reports them. */
export type AgentProgress = {
  /** Messages of the run so far. */
  messageCount: number;
  /** Tool calls so far. */
  toolUseCount: number;
  /** Usage summed over the run's responses. */
  usage: CompleteUsage;
  /** What the agent did last. */
  lastActivity?: string;
};

/** Options of `driveAgent`. */
export type DriveAgentOptions = {
  /** Messages to add to the agent's conversation before it runs. */
  newMessages: readonly Message[];
  /** Leading messages of the starting conversation its transcript already holds (a resume). */
  alreadyRecorded?: number;
  /** Transcript-only lines written after the starting conversation (never sent to the model). */
  transcriptOnly?: readonly Message[];
  /** Called once, when the first response of the run begins streaming. */
  onFirstResponse?: () => void;
  /** Called after each response, with the running totals. */
  onProgress?: (progress: AgentProgress) => void;
  /** Set for a fork's first run: its first request places breakpoints for this layout. */
  forkLayout?: ForkLayout;
  /** With cache debugging on: what the run's first request should read from. */
  cacheBaseline?: Anthropic.MessageCreateParamsStreaming;
  /**
   * The starting conversation already ends with the agent's report (a finished one-shot agent
   * resumed after its notification was lost): the run ends on it without a request.
   */
  endsWithReport?: boolean;
};

function describeActivity(message: AssistantMessage): string | undefined {
  const toolUse = [...message.message.content].reverse().find((block) => block.type === 'tool_use');
  if (toolUse?.type === 'tool_use') return `called ${toolUse.name}`;
  const text = message.message.content.find((block) => block.type === 'text');
  return text?.type === 'text' ? text.text.slice(0, 120) : undefined;
}

async function recordStart(
  runtime: AgentRuntime,
  record: AgentRecord,
  options: DriveAgentOptions,
): Promise<void> {
  const start = record.messages.length;
  appendMessages(record, options.newMessages);
  if (!runtime.transcript) return;
  // The first run records the whole starting conversation (a fork's inherited history
  // included), so the transcript alone is enough to resume the agent.
  const fresh = start === 0 ? record.messages : options.newMessages;
  await runtime.transcript.append(
    [...fresh.slice(options.alreadyRecorded ?? 0), ...(options.transcriptOnly ?? [])],
    record.agentId,
  );
}

/** What every loop of the session shares: the stall watchdog's settings and the request gate. */
export function sessionQueryOptions(runtime: AgentRuntime): {
  streamIdleTimeoutMs: number;
  maxConsecutiveStalls: number;
  requestGate: () => Promise<void>;
  secrets: readonly string[];
} {
  return {
    streamIdleTimeoutMs: runtime.options.streamIdleTimeoutMs,
    maxConsecutiveStalls: runtime.options.maxConsecutiveStalls,
    requestGate: runtime.requestGate,
    secrets: runtime.options.secrets,
  };
}

function startQuery(
  runtime: AgentRuntime,
  record: AgentRecord,
  options: DriveAgentOptions,
  extras: { mcp: AgentMcpConnection | undefined; carried: UserMessage[] },
) {
  const { mcp, carried } = extras;
  return query({
    client: runtime.client,
    messages: [...record.messages],
    systemPrompt: record.systemPrompt,
    ...(record.userContext ? { userContext: record.userContext } : {}),
    ...(record.systemContext ? { systemContext: record.systemContext } : {}),
    toolUseContext: mcp ? withExtraTools(record.context, mcp.tools) : record.context,
    canUseTool: record.canUseTool,
    querySource: record.querySource,
    ...(record.maxTurns !== undefined ? { maxTurns: record.maxTurns } : {}),
    ...(record.effort ? { effort: record.effort } : {}),
    ...(record.toolDefinitions ? { toolDefinitions: record.toolDefinitions } : {}),
    ...(record.toolHooks ? { toolHooks: record.toolHooks } : {}),
    ...(options.forkLayout ? { forkLayout: options.forkLayout } : {}),
    // Notifications count as delivered once a response to the request that carried them
    // has come (see `driveAgent`).
    drainQueuedMessages: () => {
      const taken = takeInbox(record);
      carried.push(...runtime.tasks.notificationsAmong(taken));
      return taken;
    },
    usageGuard: createUsageGuard({
      runtime,
      agentId: record.agentId,
      model: () => record.context.options.model,
      onRecorded: (usage, costUsd) => addResponseUsage(record, usage, costUsd),
    }),
    ...sessionQueryOptions(runtime),
  });
}

/** Tells renderers (the CLI's stream-json, a dashboard) about a message the agent added. */
function emitMessage(runtime: AgentRuntime, record: AgentRecord, message: Message): void {
  runtime.events.emit({
    type: 'agent.message',
    agentId: record.agentId,
    timestamp: new Date().toISOString(),
    message,
  });
}

/** Progress bookkeeping of one run. */
class RunProgress {
  private messageCount = 0;
  private toolUseCount = 0;
  private usage = emptyUsage();

  constructor(
    private readonly runtime: AgentRuntime,
    private readonly record: AgentRecord,
    private readonly onProgress: DriveAgentOptions['onProgress'],
  ) {}

  countMessage(): void {
    this.messageCount++;
  }

  countResponse(message: AssistantMessage): void {
    this.usage = addUsage(this.usage, completeUsage(message.message.usage));
    this.toolUseCount += message.message.content.filter(
      (block) => block.type === 'tool_use',
    ).length;
    const lastActivity = describeActivity(message);
    const progress = {
      messageCount: this.messageCount,
      toolUseCount: this.toolUseCount,
      usage: this.usage,
      ...(lastActivity ? { lastActivity } : {}),
    };
    this.onProgress?.(progress);
    this.runtime.events.emit({
      type: 'agent.progress',
      agentId: this.record.agentId,
      timestamp: new Date().toISOString(),
      messageCount: this.messageCount,
      toolUseCount: this.toolUseCount,
      tokens: totalTokens(message.message.usage),
      ...(lastActivity ? { lastActivity } : {}),
    });
  }
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
  await recordStart(runtime, record, options);
  if (options.endsWithReport) return 'completed';
  let firstResponse = false;
  const notifyFirst = (): void => {
    if (firstResponse) return;
    firstResponse = true;
    options.onFirstResponse?.();
  };
  const progress = new RunProgress(runtime, record, options.onProgress);
  const report = runtime.options.debugCacheDiagnosis;
  const diagnoser = report ? new CacheDiagnoser(record, report, options.cacheBaseline) : undefined;
  let mcp: AgentMcpConnection | undefined;
  // Notifications a request carried that has had no response yet.
  const carried: UserMessage[] = [];
  try {
    mcp = await openOwnMcpServers(runtime, record);
    // Said once the connection is held: a listener that throws must not lose it.
    if (mcp) emitMcpWarnings(runtime, record, mcp);
    const generator = startQuery(runtime, record, options, { mcp, carried });
    for (;;) {
      const next = await generator.next();
      if (next.done) return next.value.reason;
      const event = next.value;
      if (event.type === 'stream_event') {
        if (event.event.type === 'message_start') notifyFirst();
        continue;
      }
      if (event.type === 'stream_request_start') {
        diagnoser?.observe(event.request, event.turn);
        continue;
      }
      appendMessages(record, [event]);
      progress.countMessage();
      if (runtime.transcript && event.type !== 'system')
        await runtime.transcript.append([event], record.agentId);
      if (event.type === 'assistant' || event.type === 'user') emitMessage(runtime, record, event);
      if (event.type === 'assistant') {
        progress.countResponse(event);
        runtime.tasks.markDelivered(carried.splice(0));
      }
      yield event;
    }
  } finally {
    notifyFirst();
    // The run ended (failed, stopped) before the model answered them: back to the inbox, so
    // settling hands them to the main agent instead of losing them.
    if (carried.length > 0) returnToInbox(record, carried.splice(0));
    // Its servers live as long as the run (a continuation starts them again). The result does
    // not wait for them to exit; `session.close()` does.
    if (mcp) closeOwnMcpServers(runtime, mcp);
  }
}

/** Starts the agent's own MCP servers for this run, if its definition has any. */
async function openOwnMcpServers(
  runtime: AgentRuntime,
  record: AgentRecord,
): Promise<AgentMcpConnection | undefined> {
  if (!record.mcpServers || Object.keys(record.mcpServers).length === 0) return undefined;
  const connection = await connectAgentMcpServers({
    agentType: record.agentType,
    servers: record.mcpServers,
    cwd: record.context.cwd,
    signal: record.context.abortController.signal,
    connectTimeoutMs: AGENT_MCP_CONNECT_TIMEOUT_MS,
    // Held from the start: `session.close()` stops servers that are still connecting too.
    onOpen: (opened) => runtime.agentMcpConnections.add(opened),
  });
  connection.tools = withoutDisallowed(connection.tools, record.mcpDisallowedTools);
  return connection;
}

function emitMcpWarnings(
  runtime: AgentRuntime,
  record: AgentRecord,
  connection: AgentMcpConnection,
): void {
  for (const warning of connection.warnings) {
    runtime.events.emit({
      type: 'agent.warning',
      agentId: record.agentId,
      timestamp: new Date().toISOString(),
      code: warning.code,
      message: warning.message,
    });
  }
}

/** Stops a run's servers without waiting; `session.flush()` and `close()` wait for it. */
function closeOwnMcpServers(runtime: AgentRuntime, connection: AgentMcpConnection): void {
  const closing = connection
    .close()
    .catch(() => undefined)
    .finally(() => {
      runtime.agentMcpConnections.delete(connection);
      runtime.pendingRuns.delete(closing);
    });
  runtime.pendingRuns.add(closing);
}
