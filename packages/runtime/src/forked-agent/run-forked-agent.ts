import type Anthropic from '@anthropic-ai/sdk';
import {
  type CanUseTool,
  type CompleteUsage,
  type Message,
  type QueryTracking,
  type ToolUseContext,
  addUsage,
  cacheHitRate,
  completeUsage,
  createAgentId,
  emptyUsage,
} from '@delegate/core';
import {
  type SubagentContextOverrides,
  createSubagentContext,
  releaseSubagentContext,
} from '@delegate/context-isolation';
import { type CacheSafeParams, assertCacheSafeForkOptions } from '@delegate/fork-cache';
import type { ApiToolDefinition } from '../query/build-messages-request.js';
import { type QueryParams, query } from '../query/query.js';
import { getRenderedRequestParts } from '../query/rendered-request.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import type { ToolCallHooks } from '../query/run-tools.js';

/** Facts about a finished forked run, for logs and metrics. */
export type ForkedAgentCompletion = {
  /** Label given by the caller (`summary`, `suggestion`, …). */
  forkLabel: string;
  /** Query source of the run. */
  querySource: string;
  /** Wall-clock duration. */
  durationMs: number;
  /** Messages the run produced. */
  messageCount: number;
  /** Usage summed over every response. */
  totalUsage: CompleteUsage;
  /** Cache read over all input tokens, 0 to 1. */
  cacheHitRate: number;
  /** The parent's query chain. */
  queryTracking: QueryTracking | undefined;
};

/** Options of `runForkedAgent`. */
export type ForkedAgentParams = {
  /** SDK client. */
  client: Anthropic;
  /** Messages to add after the parent's (the fork's directive). */
  promptMessages: readonly Message[];
  /** Parameters that must match the parent's request for a cache hit. */
  cacheSafeParams: CacheSafeParams;
  /** Permission check. */
  canUseTool: CanUseTool;
  /** Query source recorded on the run. */
  querySource: string;
  /** Short label for ids and logs. */
  forkLabel: string;
  /** Isolation overrides for the child context. */
  overrides?: SubagentContextOverrides;
  /** Output cap; refused when the fork shares the cache (it changes the cache key). */
  maxOutputTokens?: number;
  /** Set to false when cache sharing is not a goal (allows `maxOutputTokens`). */
  shareCache?: boolean;
  /** Turn limit. */
  maxTurns?: number;
  /** Called with each message the fork produces. */
  onMessage?: (message: Message) => void;
  /** Do not write a transcript (no agent id is returned). */
  skipTranscript?: boolean;
  /** Read the parent's cache without writing this fork's tail. */
  skipCacheWrite?: boolean;
  /** Where transcripts go (no transcript without one). */
  transcript?: TranscriptStore;
  /** Exact tool definitions of the parent's request (default: what the parent's context last sent). */
  toolDefinitions?: readonly ApiToolDefinition[];
  /** Called once the run has finished. */
  onComplete?: (completion: ForkedAgentCompletion) => void;
  /** Hooks around each approved tool call (`forkAfterTurn`: the main agent's). */
  toolHooks?: ToolCallHooks;
  /** Values replaced by `[REDACTED]` in tool results, besides the client's credentials. */
  secrets?: readonly string[];
  /**
   * Records the fork's responses and checks a budget before each request (`forkAfterTurn`
   * counts the work under the session's main agent and its budget).
   */
  usageGuard?: QueryParams['usageGuard'];
};

/** What `runForkedAgent` returns. */
export type ForkedAgentResult = {
  /** Messages the fork produced (not including the inherited ones). */
  messages: Message[];
  /** Usage summed over every response the run kept (a retried stream's failed attempt is not counted). */
  totalUsage: CompleteUsage;
  /** Id of the fork's transcript, when one was written. */
  agentId: string | undefined;
};

/** Streams the fork's loop, keeping its messages, usage and transcript. */
async function driveFork(options: {
  params: ForkedAgentParams;
  isolated: ToolUseContext;
  initialMessages: Message[];
  agentId: string | undefined;
}): Promise<{ messages: Message[]; totalUsage: CompleteUsage }> {
  const { params, isolated, agentId } = options;
  const { systemPrompt, userContext, systemContext, toolUseContext } = params.cacheSafeParams;
  // The parent's exact tool bytes, when not given: the fork's request must match the turn's.
  const toolDefinitions =
    params.toolDefinitions ?? getRenderedRequestParts(toolUseContext)?.toolDefinitions;
  const messages: Message[] = [];
  let totalUsage = emptyUsage();
  for await (const event of query({
    client: params.client,
    messages: options.initialMessages,
    systemPrompt,
    userContext,
    systemContext,
    toolUseContext: isolated,
    canUseTool: params.canUseTool,
    querySource: params.querySource,
    ...(params.maxOutputTokens !== undefined
      ? { maxOutputTokensOverride: params.maxOutputTokens }
      : {}),
    ...(params.maxTurns !== undefined ? { maxTurns: params.maxTurns } : {}),
    ...(params.skipCacheWrite ? { skipCacheWrite: true } : {}),
    ...(toolDefinitions ? { toolDefinitions } : {}),
    ...(params.usageGuard ? { usageGuard: params.usageGuard } : {}),
    ...(params.toolHooks ? { toolHooks: params.toolHooks } : {}),
    ...(params.secrets ? { secrets: params.secrets } : {}),
  })) {
    // Usage comes from the finished responses, not the stream: a stream that failed
    // mid-way is retried, and its events (message_stop included) were already yielded.
    if (event.type === 'stream_event' || event.type === 'stream_request_start') continue;
    messages.push(event);
    if (event.type === 'assistant')
      totalUsage = addUsage(totalUsage, completeUsage(event.message.usage));
    params.onMessage?.(event);
    if (agentId && params.transcript && event.type !== 'system')
      await params.transcript.append([event], agentId);
  }
  return { messages, totalUsage };
}

/**
 * Runs work that forks from a finished turn: an isolated child context, the parent's
 * messages plus the new ones, and the parent's cache-safe parameters (and, unless given,
 * the tool definitions the parent last sent) so the request prefix, and so the prompt
 * cache, is shared. Incomplete tool calls in the inherited history are left for the
 * pairing repair rather than dropped: dropping the assistant message would orphan its
 * results and change the prefix. The child context is released when the run ends, even
 * when it fails: its abort link, its file cache and the inherited messages.
 */
export async function runForkedAgent(params: ForkedAgentParams): Promise<ForkedAgentResult> {
  assertCacheSafeForkOptions({
    ...(params.maxOutputTokens !== undefined ? { maxOutputTokens: params.maxOutputTokens } : {}),
    shareCache: params.shareCache ?? true,
  });
  const startTime = Date.now();
  const { toolUseContext, forkContextMessages } = params.cacheSafeParams;
  const isolated = createSubagentContext(toolUseContext, params.overrides);
  const initialMessages: Message[] = [...forkContextMessages, ...params.promptMessages];
  const agentId =
    params.skipTranscript || !params.transcript ? undefined : createAgentId(params.forkLabel);
  let result: { messages: Message[]; totalUsage: CompleteUsage };
  try {
    if (agentId && params.transcript) await params.transcript.append(initialMessages, agentId);
    result = await driveFork({ params, isolated, initialMessages, agentId });
  } finally {
    releaseSubagentContext(isolated);
    isolated.readFileState.clear();
    initialMessages.length = 0;
  }
  params.onComplete?.({
    forkLabel: params.forkLabel,
    querySource: params.querySource,
    durationMs: Date.now() - startTime,
    messageCount: result.messages.length,
    totalUsage: result.totalUsage,
    cacheHitRate: cacheHitRate(result.totalUsage),
    queryTracking: toolUseContext.queryTracking,
  });
  return { messages: result.messages, totalUsage: result.totalUsage, agentId };
}
