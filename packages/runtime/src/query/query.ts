import type Anthropic from '@anthropic-ai/sdk';
import {
  type AssistantMessage,
  type CanUseTool,
  type ContentBlock,
  type Message,
  type ProgressMessage,
  type SystemMessage,
  type ThinkingConfig,
  type ToolResultBlock,
  type ToolUseBlock,
  type ToolUseContext,
  type UserMessage,
  DelegateError,
  completeUsage,
  createSystemMessage,
  createUserMessage,
  createUuid,
  errorMessage,
  isAbortError,
} from '@delegate/core';
import {
  type ApiEffort,
  type ApiToolDefinition,
  buildMessagesRequest,
} from './build-messages-request.js';
import { ensureToolResultPairing, toWireMessages } from './normalize-messages.js';
import { runToolUses } from './run-tools.js';
import { delay } from '../util/delay.js';
import { setRenderedRequestParts } from './rendered-request.js';
import { toolsToApiDefinitions } from './tool-schemas.js';

/** A raw stream event of the Messages API, as yielded by `query`. */
export type StreamEventMessage = { type: 'stream_event'; event: Anthropic.RawMessageStreamEvent };

/** Marks the start of one API request (with the exact body sent). */
export type RequestStartMessage = {
  type: 'stream_request_start';
  request: Anthropic.MessageCreateParamsStreaming;
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
  /** Exact tool definitions to send (forks reuse the parent's bytes). */
  toolDefinitions?: readonly ApiToolDefinition[];
  /** Retries of a stream that fails after it started (overloaded, connection reset). */
  maxStreamRetries?: number;
};

/** Renders user context as the `<system-reminder>` block that opens the conversation. */
export function renderUserContext(context: Readonly<Record<string, string>>): string {
  const body = Object.keys(context)
    .sort()
    .map((key) => `# ${key}\n${context[key]}`)
    .join('\n\n');
  return `<system-reminder>\nUse this context where it is relevant to the task:\n\n${body}\n</system-reminder>`;
}

/** The user-context reminder that opens the conversation, or undefined when there is none. */
function userContextReminder(
  userContext: Readonly<Record<string, string>> | undefined,
): UserMessage | undefined {
  if (!userContext || Object.keys(userContext).length === 0) return undefined;
  return createUserMessage({ content: renderUserContext(userContext), isMeta: true });
}

type Accumulator = {
  message: AssistantMessage['message'] | undefined;
  blocks: Array<ContentBlock & { partialJson?: string }>;
};

function applyEvent(acc: Accumulator, event: Anthropic.RawMessageStreamEvent): void {
  switch (event.type) {
    case 'message_start': {
      const start = event.message;
      acc.message = {
        id: start.id,
        role: 'assistant',
        model: start.model,
        content: [],
        stop_reason: start.stop_reason ?? null,
        usage: completeUsage(start.usage),
      };
      return;
    }
    case 'content_block_start': {
      const block = event.content_block as unknown as ContentBlock;
      if (block.type === 'tool_use')
        acc.blocks[event.index] = { ...block, input: {}, partialJson: '' };
      else acc.blocks[event.index] = { ...block } as ContentBlock;
      return;
    }
    case 'content_block_delta': {
      const block = acc.blocks[event.index];
      if (!block) return;
      const delta = event.delta;
      if (delta.type === 'text_delta' && block.type === 'text') block.text += delta.text;
      else if (delta.type === 'input_json_delta' && block.type === 'tool_use') {
        block.partialJson = (block.partialJson ?? '') + delta.partial_json;
      } else if (delta.type === 'thinking_delta' && block.type === 'thinking')
        block.thinking += delta.thinking;
      else if (delta.type === 'signature_delta' && block.type === 'thinking')
        block.signature += delta.signature;
      return;
    }
    case 'content_block_stop': {
      const block = acc.blocks[event.index];
      if (block?.type === 'tool_use') {
        const raw = block.partialJson ?? '';
        delete block.partialJson;
        block.input = raw.length > 0 ? safeJsonParse(raw) : {};
      }
      return;
    }
    case 'message_delta': {
      if (!acc.message) return;
      acc.message.stop_reason = event.delta.stop_reason ?? acc.message.stop_reason;
      const usage = event.usage as unknown as Record<string, unknown>;
      const merged = { ...acc.message.usage } as Record<string, unknown>;
      for (const [key, value] of Object.entries(usage)) {
        if (value !== null && value !== undefined) merged[key] = value;
      }
      acc.message.usage = completeUsage(merged as AssistantMessage['message']['usage']);
      return;
    }
    case 'message_stop':
      return;
  }
}

function safeJsonParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { __invalid_json__: text };
  }
}

function isRetryableStreamError(error: unknown): boolean {
  if (isAbortError(error)) return false;
  if (DelegateError.isInstance(error) && error.details?.['streamEndedEarly'] === true) return true;
  const status = (error as { status?: number }).status;
  if (status === 529 || status === 500 || status === 503 || status === 504) return true;
  const name = (error as { name?: string }).name ?? '';
  const message = errorMessage(error).toLowerCase();
  return (
    name === 'APIConnectionError' ||
    message.includes('overloaded') ||
    // undici's error when the connection is cut mid-body.
    message.includes('terminated') ||
    message.includes('socket') ||
    message.includes('econnreset')
  );
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
 */
export async function* query(params: QueryParams): AsyncGenerator<QueryEvent, QueryOutcome> {
  const context = params.toolUseContext;
  const signal = context.abortController.signal;
  const conversation: Message[] = [...params.messages];
  const thinking = params.thinking ?? context.options.thinking;
  const toolDefinitions =
    params.toolDefinitions ?? (await toolsToApiDefinitions(context.options.tools, context));
  setRenderedRequestParts(context, {
    systemPrompt: [...params.systemPrompt],
    toolDefinitions,
    ...(params.userContext ? { userContext: params.userContext } : {}),
    ...(params.systemContext ? { systemContext: params.systemContext } : {}),
    ...(thinking ? { thinking } : {}),
  });
  let turns = 0;
  // Built once: its bytes open every request of this loop.
  const reminder = userContextReminder(params.userContext);

  for (;;) {
    if (signal.aborted) return { reason: 'aborted', turns };
    for (const queued of params.drainQueuedMessages?.() ?? []) {
      conversation.push(queued);
      yield queued;
    }
    if (params.maxTurns !== undefined && turns >= params.maxTurns) {
      const note = createSystemMessage(
        `Stopped after reaching the limit of ${params.maxTurns} turns.`,
        'max_turns',
      );
      yield note;
      throw new DelegateError(
        'MAX_TURNS',
        `The agent (${params.querySource}) reached its limit of ${params.maxTurns} turns before finishing. Raise maxTurns in its definition, or give it a smaller task.`,
        {
          details: { maxTurns: params.maxTurns, querySource: params.querySource },
        },
      );
    }
    turns++;
    const wire = ensureToolResultPairing(
      toWireMessages(reminder ? [reminder, ...conversation] : conversation),
    );
    const request = buildMessagesRequest({
      model: context.options.model,
      systemPrompt: params.systemPrompt,
      ...(params.systemContext ? { systemContext: params.systemContext } : {}),
      messages: wire,
      tools: toolDefinitions,
      ...(thinking ? { thinking } : {}),
      ...(params.maxOutputTokensOverride !== undefined
        ? { maxOutputTokens: params.maxOutputTokensOverride }
        : {}),
      ...(params.effort ? { effort: params.effort } : {}),
      ...(params.skipCacheWrite ? { skipCacheWrite: true } : {}),
    });
    yield { type: 'stream_request_start', request, turn: turns };

    let assistant: AssistantMessage | undefined;
    for (let attempt = 0; ; attempt++) {
      const acc: Accumulator = { message: undefined, blocks: [] };
      // HTTP-level failures were already retried by the SDK; only a stream that fails
      // after it started (an error event, a cut connection) is retried here.
      let streamStarted = false;
      try {
        const { data: stream, request_id: requestId } = await params.client.messages
          .create(request, {
            signal,
            // Lets a proxy or the simulator tell agents apart; the API ignores it.
            ...(context.agentType ? { headers: { 'x-delegate-agent': context.agentType } } : {}),
          })
          .withResponse();
        streamStarted = true;
        let stopped = false;
        for await (const event of stream) {
          applyEvent(acc, event);
          if (event.type === 'message_stop') stopped = true;
          yield { type: 'stream_event', event };
        }
        // The SDK ends the iteration quietly on abort; a cut connection looks the same.
        if (signal.aborted) return { reason: 'aborted', turns };
        if (!acc.message || !stopped) {
          throw new DelegateError(
            'API_ERROR',
            'The response stream ended before message_stop (the connection was cut).',
            { details: { streamEndedEarly: true } },
          );
        }
        acc.message.content = acc.blocks.filter(
          (block): block is ContentBlock => block !== undefined,
        );
        assistant = {
          type: 'assistant',
          uuid: createUuid(),
          timestamp: new Date().toISOString(),
          message: acc.message,
          ...(requestId ? { requestId } : {}),
          ...(context.agentId ? { agentId: context.agentId } : {}),
        };
        break;
      } catch (error) {
        if (signal.aborted || isAbortError(error)) return { reason: 'aborted', turns };
        const retries = params.maxStreamRetries ?? 2;
        if (streamStarted && attempt < retries && isRetryableStreamError(error)) {
          yield createSystemMessage(
            `The API stream failed (${errorMessage(error)}); retrying (${attempt + 1}/${retries}).`,
            'api_retry',
          );
          await delay(Math.min(2000, 200 * 2 ** attempt), { signal });
          if (signal.aborted) return { reason: 'aborted', turns };
          continue;
        }
        throw new DelegateError(
          'API_ERROR',
          `The Messages API request of ${context.agentType ? `agent ${context.agentType}` : 'the main agent'} (${params.querySource}) failed: ${errorMessage(error)}`,
          {
            cause: error,
            details: {
              status: (error as { status?: number }).status,
              querySource: params.querySource,
            },
          },
        );
      }
    }

    conversation.push(assistant);
    yield assistant;

    const toolUses = assistant.message.content.filter(
      (block): block is ToolUseBlock => block.type === 'tool_use',
    );
    if (toolUses.length === 0) {
      // At the turn limit the run ends as completed and queued messages stay queued (the
      // caller can start a new run for them) rather than failing a finished task.
      if (params.maxTurns !== undefined && turns >= params.maxTurns)
        return { reason: 'completed', turns };
      // Messages queued while the last response streamed are answered, not dropped.
      const late = params.drainQueuedMessages?.() ?? [];
      if (late.length === 0) return { reason: 'completed', turns };
      for (const queued of late) {
        conversation.push(queued);
        yield queued;
      }
      continue;
    }

    context.messages = conversation;
    const results: ToolResultBlock[] = [];
    const extraMessages: Message[] = [];
    for await (const update of runToolUses({
      toolUses,
      assistantMessage: assistant,
      context,
      canUseTool: params.canUseTool,
      maxConcurrency: params.maxToolConcurrency ?? 10,
    })) {
      if (update.type === 'progress') {
        yield update.message;
      } else {
        results.push(update.result);
        extraMessages.push(...update.newMessages);
      }
    }
    const resultMessage = createUserMessage({
      content: results,
      ...(context.agentId ? { agentId: context.agentId } : {}),
    });
    conversation.push(resultMessage);
    yield resultMessage;
    for (const extra of extraMessages) {
      conversation.push(extra);
      yield extra;
    }
    if (signal.aborted) return { reason: 'aborted', turns };
  }
}
