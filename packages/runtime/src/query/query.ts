import type Anthropic from '@anthropic-ai/sdk';
import {
  type AssistantMessage,
  type CanUseTool,
  type Message,
  type ProgressMessage,
  type SystemMessage,
  type ThinkingConfig,
  type ToolResultBlock,
  type ToolUseBlock,
  type ToolUseContext,
  type UserMessage,
  DelegateError,
  createSystemMessage,
  createUserMessage,
  getLastAssistantMessage,
  totalTokens,
} from '@delegate/core';
import type { BlockAddress, ForkLayout } from '@delegate/fork-cache';
import {
  type ApiEffort,
  type ApiToolDefinition,
  buildMessagesRequest,
} from './build-messages-request.js';
import { planMessageBreakpoints } from './plan-message-breakpoints.js';
import { setLastRequest, setRenderedRequestParts } from './rendered-request.js';
import { type ToolCallHooks, runToolUses } from './run-tools.js';
import {
  DEFAULT_MAX_CONSECUTIVE_STALLS,
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  streamResponse,
} from './stream-response.js';
import { toolsToApiDefinitions } from './tool-schemas.js';
import { userContextReminder } from './user-context.js';
import { WireConversation } from './wire-conversation.js';
import type { UsageGuard } from '../usage/usage-guard.js';
import { checkQueryParams } from './check-query-params.js';
import { createLoopContext } from './loop-context.js';
import { secretRedactor } from '../util/redact-secrets.js';

/** A raw stream event of the Messages API, as yielded by `query`. */
export type StreamEventMessage = {
  /** Discriminator. */
  type: 'stream_event';
  /** The event as the SDK parsed it. */
  event: Anthropic.RawMessageStreamEvent;
};

/** Marks the start of one API request (with the exact body sent). */
export type RequestStartMessage = {
  /** Discriminator. */
  type: 'stream_request_start';
  /** The request body, exactly as sent. */
  request: Anthropic.MessageCreateParamsStreaming;
  /** 1-based number of the request in this loop. */
  turn: number;
};

/** Everything `query` yields. */
export type QueryEvent =
  | StreamEventMessage
  | RequestStartMessage
  | AssistantMessage
  | UserMessage
  | ProgressMessage
  | SystemMessage;

/** How a query ended. */
export type QueryOutcome = {
  /** `completed`: the model stopped calling tools; `aborted`: the abort signal fired. */
  reason: 'completed' | 'aborted';
  /** Number of API requests made. */
  turns: number;
};

/** Options of `query`. */
export type QueryParams = {
  /** The SDK client (real API or the simulator, by base URL). */
  client: Anthropic;
  /** The conversation so far; not modified. */
  messages: readonly Message[];
  /** System prompt blocks, sent byte for byte. */
  systemPrompt: readonly string[];
  /** Context prepended to the first user message (a `<system-reminder>` block). */
  userContext?: Readonly<Record<string, string>>;
  /** Context appended to the system prompt. */
  systemContext?: Readonly<Record<string, string>>;
  /** The agent's context: tools, model, abort signal, caches. */
  toolUseContext: ToolUseContext;
  /** Permission check for each tool call. */
  canUseTool: CanUseTool;
  /** Turn limit; reaching it throws a DelegateError with code MAX_TURNS. */
  maxTurns?: number;
  /** Output cap; it also clamps the thinking budget (and so changes the cache key). */
  maxOutputTokensOverride?: number;
  /** Where the query comes from (`repl_main_thread`, `agent:builtin:fork`, …). */
  querySource: string;
  /** Thinking configuration; defaults to `toolUseContext.options.thinking`. */
  thinking?: ThinkingConfig;
  /** Reasoning effort. */
  effort?: ApiEffort;
  /** Read the cache without writing this request's tail (fire-and-forget forks). */
  skipCacheWrite?: boolean;
  /** Messages to add before each request (task notifications), drained once each. */
  drainQueuedMessages?: () => UserMessage[];
  /** Tools run in parallel at most (concurrency-safe ones only). */
  maxToolConcurrency?: number;
  /**
   * Longest text of one tool result passed on to the model; the rest is cut with a note
   * (default `DEFAULT_MAX_TOOL_RESULT_CHARS`, 400,000 characters).
   */
  maxToolResultChars?: number;
  /** Exact tool definitions to send (forks reuse the parent's bytes). */
  toolDefinitions?: readonly ApiToolDefinition[];
  /** Retries of a stream that fails after it started (overloaded, connection reset); default 2. */
  maxStreamRetries?: number;
  /**
   * Milliseconds a streaming response may go without an event (headers included) before it
   * counts as stalled: aborted and retried from the last finished turn (default 90000).
   */
  streamIdleTimeoutMs?: number;
  /** Stalls in a row of one request after which the loop throws `STREAM_STALLED` (default 3). */
  maxConsecutiveStalls?: number;
  /** Hooks run around each approved tool call (a sub-agent's PreToolUse/PostToolUse). */
  toolHooks?: ToolCallHooks;
  /**
   * Values replaced by `[REDACTED]` in every tool result, besides the client's own API key
   * and auth token (which always are): a file or a command output holding one never reaches
   * the model, the transcript or an event.
   */
  secrets?: readonly string[];
  /**
   * Set when `messages` are a fork child's starting conversation (the parent's last request,
   * then the two messages of `buildForkChildMessages` in this layout): the first request
   * places its breakpoints for a fork, so it reads the parent's cached history whatever the
   * number of siblings.
   */
  forkLayout?: ForkLayout;
  /**
   * Records each kept response and checks the agent's budget before every request and after
   * every response that calls tools; its `BUDGET_EXCEEDED` error ends the loop.
   */
  usageGuard?: UsageGuard;
  /**
   * Awaited before each request is built and sent. A `DelegateSession` passes one gate shared
   * by all its agents that lets one request through per event-loop turn, so a burst of
   * responses arriving together does not become one long stretch of request building that
   * stalls timers and I/O (see `createStartGate`).
   */
  requestGate?: () => Promise<void>;
};

/** The state of one running loop. */
type Loop = {
  params: QueryParams;
  /** The context the loop hands its tools (see `createLoopContext`). */
  context: ToolUseContext;
  /** The caller's context (`params.toolUseContext`). */
  origin: ToolUseContext;
  /** Stops the loop's running tool calls when its consumer stops reading. */
  interrupt: () => void;
  /** Unlinks the loop's abort controller from the caller's when the loop ends. */
  release: () => void;
  signal: AbortSignal;
  conversation: Message[];
  wire: WireConversation;
  toolDefinitions: readonly ApiToolDefinition[];
  thinking: ThinkingConfig | undefined;
  turns: number;
  /** Message breakpoints of the previous request (where it wrote cache entries). */
  breakpoints: BlockAddress[];
  /** Every token of the last response: the next request's input holds at least this many. */
  contextTokens: number;
  /** Removes the client's credentials and `params.secrets` from tool results, progress and API errors. */
  redact: ((text: string) => string) | undefined;
};

/** Every token of the history's last response (0 for none): what the next request holds at least. */
function historyContextTokens(conversation: readonly Message[]): number {
  const usage = getLastAssistantMessage(conversation)?.message.usage;
  return usage ? totalTokens(usage) : 0;
}

async function startLoop(params: QueryParams): Promise<Loop> {
  checkQueryParams(params);
  const origin = params.toolUseContext;
  const thinking = params.thinking ?? origin.options.thinking;
  const toolDefinitions =
    params.toolDefinitions ?? (await toolsToApiDefinitions(origin.options.tools, origin));
  const { context, interrupt, release } = createLoopContext(origin);
  const rendered = {
    systemPrompt: [...params.systemPrompt],
    toolDefinitions,
    ...(params.userContext ? { userContext: params.userContext } : {}),
    ...(params.systemContext ? { systemContext: params.systemContext } : {}),
    ...(thinking ? { thinking } : {}),
  };
  // Under both: the loop's tools (a fork) read it from theirs, the caller from its own.
  setRenderedRequestParts(origin, rendered);
  setRenderedRequestParts(context, rendered);
  // Built once: its bytes open every request of this loop.
  const reminder = userContextReminder(params.userContext);
  const conversation = [...params.messages];
  return {
    params,
    context,
    origin,
    interrupt,
    release,
    signal: context.abortController.signal,
    conversation,
    wire: new WireConversation(reminder ? [reminder, ...conversation] : conversation),
    toolDefinitions,
    thinking,
    turns: 0,
    breakpoints: [],
    // A conversation that goes on (the next send, a resumed or messaged agent, a fork's
    // inherited history) sends its last response's whole context again: its size is known.
    contextTokens: historyContextTokens(conversation),
    redact: secretRedactor([
      params.client.apiKey,
      params.client.authToken,
      ...(params.secrets ?? []),
    ]),
  };
}

function add(loop: Loop, message: Message): void {
  loop.conversation.push(message);
  loop.wire.append(message);
}

function* addQueued(loop: Loop, queued: readonly UserMessage[]): Generator<UserMessage> {
  for (const message of queued) {
    add(loop, message);
    yield message;
  }
}

function* enforceTurnLimit(loop: Loop): Generator<SystemMessage> {
  const { maxTurns, querySource } = loop.params;
  if (maxTurns === undefined || loop.turns < maxTurns) return;
  yield createSystemMessage(`Stopped after reaching the limit of ${maxTurns} turns.`, 'max_turns');
  throw new DelegateError(
    'MAX_TURNS',
    `The agent (${querySource}) reached its limit of ${maxTurns} turns before finishing. Raise maxTurns in its definition, or give it a smaller task.`,
    { details: { maxTurns, querySource } },
  );
}

function buildTurnRequest(loop: Loop): Anthropic.MessageCreateParamsStreaming {
  const { params } = loop;
  const messages = loop.wire.messages();
  // Planned from the previous request's breakpoints, so a turn that added many blocks (a
  // fan-out of forks and their results) still reads what the previous request cached.
  loop.breakpoints = planMessageBreakpoints({
    messages,
    previous: loop.breakpoints,
    ...(loop.turns === 1 && params.forkLayout ? { forkLayout: params.forkLayout } : {}),
  });
  const request = buildMessagesRequest({
    model: loop.context.options.model,
    systemPrompt: params.systemPrompt,
    ...(params.systemContext ? { systemContext: params.systemContext } : {}),
    messages,
    breakpoints: loop.breakpoints,
    tools: loop.toolDefinitions,
    ...(loop.thinking ? { thinking: loop.thinking } : {}),
    ...(params.maxOutputTokensOverride !== undefined
      ? { maxOutputTokens: params.maxOutputTokensOverride }
      : {}),
    ...(params.effort ? { effort: params.effort } : {}),
    ...(params.skipCacheWrite ? { skipCacheWrite: true } : {}),
  });
  setLastRequest(loop.origin, request);
  setLastRequest(loop.context, request);
  return request;
}

/**
 * After a response without tool calls: the loop ends, unless messages were queued while
 * it streamed (they are answered, not dropped). At the turn limit the run ends as
 * completed and queued messages stay queued (the caller can start a new run for them)
 * rather than failing a finished task. Returns the messages to continue with, if any.
 */
function lateMessages(loop: Loop): UserMessage[] {
  const { maxTurns } = loop.params;
  if (maxTurns !== undefined && loop.turns >= maxTurns) return [];
  return loop.params.drainQueuedMessages?.() ?? [];
}

async function* runToolTurn(
  loop: Loop,
  assistant: AssistantMessage,
  toolUses: ToolUseBlock[],
): AsyncGenerator<QueryEvent> {
  const { context, params } = loop;
  context.messages = loop.conversation;
  loop.origin.messages = loop.conversation;
  const results: ToolResultBlock[] = [];
  const extraMessages: Message[] = [];
  for await (const update of runToolUses({
    toolUses,
    assistantMessage: assistant,
    context,
    canUseTool: params.canUseTool,
    maxConcurrency: params.maxToolConcurrency ?? 10,
    ...(params.maxToolResultChars !== undefined
      ? { maxResultChars: params.maxToolResultChars }
      : {}),
    ...(params.toolHooks ? { hooks: params.toolHooks } : {}),
    ...(loop.redact ? { redact: loop.redact } : {}),
    interrupt: loop.interrupt,
  })) {
    if (update.type === 'progress') {
      yield update.message;
      continue;
    }
    results.push(update.result);
    extraMessages.push(...update.newMessages);
  }
  const resultMessage = createUserMessage({
    content: results,
    ...(context.agentId ? { agentId: context.agentId } : {}),
  });
  for (const message of [resultMessage, ...extraMessages]) {
    add(loop, message);
    yield message;
  }
}

/**
 * The agent loop: sends the conversation to the Messages API (streaming), yields every
 * stream event and message, runs the tool calls the model makes (concurrency-safe ones
 * in parallel, the rest in order), and repeats until the model stops calling tools.
 * Dangling tool calls are repaired before each request; an abort ends the loop cleanly
 * with results recorded for interrupted calls; `maxTurns` ends it with a typed error.
 * A stream that fails after it started is retried: its events already yielded are
 * followed by a `system` message with subtype `api_retry`, and only the retried
 * response becomes an assistant message (sum usage from assistant messages, not events).
 * The conversation is kept in request form as it grows, so a turn costs the same at
 * turn 600 as at turn 6. A consumer that stops reading while tool calls run (a `break`)
 * interrupts them, and its `break` returns once they have ended (up to
 * `INTERRUPT_GRACE_MS`); the caller's abort controller is left as it was.
 */
export async function* query(params: QueryParams): AsyncGenerator<QueryEvent, QueryOutcome> {
  const loop = await startLoop(params);
  try {
    return yield* runLoop(loop);
  } finally {
    loop.release();
  }
}

async function* runLoop(loop: Loop): AsyncGenerator<QueryEvent, QueryOutcome> {
  const { params } = loop;
  for (;;) {
    if (params.requestGate) await params.requestGate();
    if (loop.signal.aborted) return { reason: 'aborted', turns: loop.turns };
    yield* addQueued(loop, params.drainQueuedMessages?.() ?? []);
    yield* enforceTurnLimit(loop);
    params.usageGuard?.ensureBudget('request', loop.contextTokens);
    loop.turns++;
    const request = buildTurnRequest(loop);
    yield { type: 'stream_request_start', request, turn: loop.turns };
    const assistant = yield* streamResponse({
      client: params.client,
      request,
      context: loop.context,
      querySource: params.querySource,
      maxRetries: params.maxStreamRetries ?? 2,
      idleTimeoutMs: params.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS,
      maxStalls: params.maxConsecutiveStalls ?? DEFAULT_MAX_CONSECUTIVE_STALLS,
      ...(loop.redact ? { redact: loop.redact } : {}),
    });
    if (!assistant) return { reason: 'aborted', turns: loop.turns };
    params.usageGuard?.recordResponse(assistant);
    loop.contextTokens = totalTokens(assistant.message.usage);
    add(loop, assistant);
    yield assistant;
    const toolUses = assistant.message.content.filter(
      (block): block is ToolUseBlock => block.type === 'tool_use',
    );
    // Tools would lead to another request: stop here when no budget is left for one.
    if (toolUses.length > 0) params.usageGuard?.ensureBudget('response', 0);
    if (toolUses.length === 0) {
      const late = lateMessages(loop);
      if (late.length === 0) return { reason: 'completed', turns: loop.turns };
      yield* addQueued(loop, late);
      continue;
    }
    yield* runToolTurn(loop, assistant, toolUses);
    if (loop.signal.aborted) return { reason: 'aborted', turns: loop.turns };
  }
}
