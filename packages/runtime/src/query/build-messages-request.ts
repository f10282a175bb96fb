import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, ThinkingConfig } from '@delegate/core';
import type { BlockAddress } from '@delegate/fork-cache';
import type { WireMessage } from './normalize-messages.js';
import { planMessageBreakpoints } from './plan-message-breakpoints.js';

/** Output cap of a request when nothing else is configured. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 16_384;

/** A Messages API tool definition. */
export type ApiToolDefinition = {
  /** Tool name. */
  name: string;
  /** Description for the model. */
  description: string;
  /** JSON Schema of the input. */
  input_schema: Record<string, unknown>;
};

/** Reasoning effort as the API's `output_config.effort` takes it. */
export type ApiEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

/** What `buildMessagesRequest` needs. */
export type BuildRequestOptions = {
  /** Model id. */
  model: string;
  /** System prompt blocks, sent byte for byte. */
  systemPrompt: readonly string[];
  /** Extra system context, appended after the prompt as one block. */
  systemContext?: Readonly<Record<string, string>>;
  /** Wire messages, already paired and merged (as `toWireMessages` or a `WireConversation` gives them). */
  messages: readonly WireMessage[];
  /** Tool definitions in order. */
  tools: readonly ApiToolDefinition[];
  /** Thinking configuration (part of the cache key). */
  thinking?: ThinkingConfig;
  /** Output cap; clamps the thinking budget, which changes the cache key. */
  maxOutputTokens?: number;
  /** Reasoning effort. */
  effort?: ApiEffort;
  /** Place the last breakpoint so the request reads the cache but writes no new tail. */
  skipCacheWrite?: boolean;
  /**
   * The message blocks that carry `cache_control` (at most three; see
   * `planMessageBreakpoints`). Default: the last block that can carry one.
   */
  breakpoints?: readonly BlockAddress[];
};

/** Renders a context map as a block of `key: value` sections (stable key order). */
export function renderContext(context: Readonly<Record<string, string>>): string {
  return Object.keys(context)
    .sort()
    .map((key) => `# ${key}\n${context[key]}`)
    .join('\n\n');
}

/** The system blocks: the prompt, then the rendered system context; the last one is a breakpoint. */
function buildSystemBlocks(options: BuildRequestOptions): Anthropic.TextBlockParam[] {
  const system: Anthropic.TextBlockParam[] = options.systemPrompt
    .filter((text) => text.length > 0)
    .map((text) => ({ type: 'text', text }));
  if (options.systemContext && Object.keys(options.systemContext).length > 0) {
    system.push({ type: 'text', text: renderContext(options.systemContext) });
  }
  const last = system[system.length - 1];
  if (last) last.cache_control = { type: 'ephemeral' };
  return system;
}

/** `max_tokens` and the API's thinking setting; the budget stays below `max_tokens`. */
function resolveOutputAndThinking(options: BuildRequestOptions): {
  maxTokens: number;
  thinking: Anthropic.ThinkingConfigParam | undefined;
} {
  let maxTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const config = options.thinking;
  if (config?.type === 'adaptive') return { maxTokens, thinking: { type: 'adaptive' } };
  if (config?.type !== 'enabled') return { maxTokens, thinking: undefined };
  // A capped output therefore changes the budget, and the thinking budget is part of the
  // cache key: forks must not cap output.
  let budget = config.budgetTokens;
  if (options.maxOutputTokens !== undefined) budget = Math.min(budget, options.maxOutputTokens - 1);
  else if (budget >= maxTokens) maxTokens = budget + DEFAULT_MAX_OUTPUT_TOKENS;
  const budgetTokens = Math.max(1024, budget);
  if (budgetTokens >= maxTokens) maxTokens = budgetTokens + 1;
  return { maxTokens, thinking: { type: 'enabled', budget_tokens: budgetTokens } };
}

/**
 * Builds a streaming Messages API request. Cache breakpoints: the last system block
 * (covers tools and system) and the given message blocks (by default the last one that can
 * carry a breakpoint), marked on copies of those messages only; the rest are sent as given.
 */
export function buildMessagesRequest(
  options: BuildRequestOptions,
): Anthropic.MessageCreateParamsStreaming {
  const system = buildSystemBlocks(options);
  const { maxTokens, thinking } = resolveOutputAndThinking(options);
  const messages = options.skipCacheWrite
    ? markBeforeLast(options.messages)
    : markBlocks(
        options.messages,
        options.breakpoints ?? planMessageBreakpoints({ messages: options.messages }),
      );
  const request: Anthropic.MessageCreateParamsStreaming = {
    model: options.model,
    max_tokens: maxTokens,
    messages: messages as Anthropic.MessageParam[],
    stream: true,
  };
  if (system.length > 0) request.system = system;
  if (options.tools.length > 0)
    request.tools = options.tools.map((tool) => ({ ...tool })) as Anthropic.Tool[];
  if (thinking) request.thinking = thinking;
  if (options.effort) request.output_config = { effort: options.effort };
  return request;
}

function isMarkable(block: ContentBlock | undefined): block is ContentBlock {
  return block !== undefined && block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

/** The messages with a breakpoint on each given block, set on copies of the messages concerned. */
function markBlocks(
  messages: readonly WireMessage[],
  breakpoints: readonly BlockAddress[],
): WireMessage[] {
  const result = [...messages];
  for (const { messageIndex, blockIndex } of breakpoints) {
    const message = result[messageIndex];
    const block = message?.content[blockIndex];
    if (!message || !isMarkable(block)) continue;
    const content = [...message.content];
    content[blockIndex] = { ...block, cache_control: { type: 'ephemeral' } } as ContentBlock;
    result[messageIndex] = { role: message.role, content };
  }
  return result;
}

/**
 * With `skipCacheWrite`: only the last markable block of the message before the last one,
 * so the request reads what earlier requests wrote without writing its own tail.
 */
function markBeforeLast(messages: readonly WireMessage[]): WireMessage[] {
  const messageIndex = messages.length - 2;
  const content = messages[messageIndex]?.content ?? [];
  for (let blockIndex = content.length - 1; blockIndex >= 0; blockIndex--) {
    if (isMarkable(content[blockIndex]))
      return markBlocks(messages, [{ messageIndex, blockIndex }]);
  }
  return [...messages];
}
