import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, ThinkingConfig } from '@delegate/core';
import type { WireMessage } from './normalize-messages.js';

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
 * (covers tools and system), and the last two blocks of the last message, so that
 * consecutive turns of one agent reuse each other's prefix and sibling forks (whose
 * requests differ only in the final directive block) reuse the first sibling's write.
 * Only the last messages are copied (to carry the markers); the rest are sent as given.
 */
export function buildMessagesRequest(
  options: BuildRequestOptions,
): Anthropic.MessageCreateParamsStreaming {
  const system = buildSystemBlocks(options);
  const { maxTokens, thinking } = resolveOutputAndThinking(options);
  const request: Anthropic.MessageCreateParamsStreaming = {
    model: options.model,
    max_tokens: maxTokens,
    messages: placeMessageBreakpoints(
      options.messages,
      options.skipCacheWrite ?? false,
    ) as Anthropic.MessageParam[],
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

/** A copy of `message` whose last `count` blocks (thinking blocks excepted) carry a breakpoint. */
function markLastBlocks(message: WireMessage, count: number): WireMessage {
  const content = [...message.content];
  for (let index = Math.max(0, content.length - count); index < content.length; index++) {
    const block = content[index];
    if (isMarkable(block))
      content[index] = { ...block, cache_control: { type: 'ephemeral' } } as ContentBlock;
  }
  return { role: message.role, content };
}

/**
 * The messages with their breakpoints, marked on copies: the last two blocks of the last
 * message, or with `skipCacheWrite` only the last block of the message before it (read
 * what earlier requests wrote without writing this request's own tail).
 */
function placeMessageBreakpoints(
  messages: readonly WireMessage[],
  skipCacheWrite: boolean,
): WireMessage[] {
  const result = [...messages];
  const index = skipCacheWrite ? result.length - 2 : result.length - 1;
  const target = result[index];
  if (target) result[index] = markLastBlocks(target, skipCacheWrite ? 1 : 2);
  return result;
}
