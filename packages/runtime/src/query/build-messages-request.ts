import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock, ThinkingConfig } from '@delegate/core';
import type { WireMessage } from './normalize-messages.js';

/** Output cap of a request when nothing else is configured. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 16_384;

/** A Messages API tool definition. */
export type ApiToolDefinition = {
  name: string;
  description: string;
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
  /** Wire messages, already paired and merged. */
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

/**
 * Builds a streaming Messages API request. Cache breakpoints: the last system block
 * (covers tools and system), and the last two blocks of the last message, so that
 * consecutive turns of one agent reuse each other's prefix and sibling forks (whose
 * requests differ only in the final directive block) reuse the first sibling's write.
 */
export function buildMessagesRequest(
  options: BuildRequestOptions,
): Anthropic.MessageCreateParamsStreaming {
  const system: Anthropic.TextBlockParam[] = options.systemPrompt
    .filter((text) => text.length > 0)
    .map((text) => ({ type: 'text', text }));
  if (options.systemContext && Object.keys(options.systemContext).length > 0) {
    system.push({ type: 'text', text: renderContext(options.systemContext) });
  }
  const lastSystem = system[system.length - 1];
  if (lastSystem) lastSystem.cache_control = { type: 'ephemeral' };

  const messages = options.messages.map((message) => ({
    role: message.role,
    content: message.content.map((block) => stripCacheControl(block)),
  }));
  placeMessageBreakpoints(messages, options.skipCacheWrite ?? false);

  let maxTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  let thinking: Anthropic.ThinkingConfigParam | undefined;
  const config = options.thinking;
  if (config?.type === 'enabled') {
    // The budget must stay below max_tokens. A capped output therefore changes the budget,
    // and the thinking budget is part of the cache key: forks must not cap output.
    let budget = config.budgetTokens;
    if (options.maxOutputTokens !== undefined)
      budget = Math.min(budget, options.maxOutputTokens - 1);
    else if (budget >= maxTokens) maxTokens = budget + DEFAULT_MAX_OUTPUT_TOKENS;
    thinking = { type: 'enabled', budget_tokens: Math.max(1024, budget) };
    if (thinking.budget_tokens >= maxTokens) maxTokens = thinking.budget_tokens + 1;
  } else if (config?.type === 'adaptive') {
    thinking = { type: 'adaptive' };
  }

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

function stripCacheControl(block: ContentBlock): ContentBlock {
  if ('cache_control' in block && block.cache_control) {
    const copy = { ...block };
    delete copy.cache_control;
    return copy;
  }
  return block;
}

type MutableMessage = { role: string; content: ContentBlock[] };

function markBlock(block: ContentBlock | undefined): void {
  if (!block || block.type === 'thinking' || block.type === 'redacted_thinking') return;
  block.cache_control = { type: 'ephemeral' };
}

function placeMessageBreakpoints(messages: MutableMessage[], skipCacheWrite: boolean): void {
  if (messages.length === 0) return;
  if (skipCacheWrite) {
    // Read what earlier requests wrote, but do not write this request's own tail.
    const previous = messages[messages.length - 2];
    if (previous) markBlock(previous.content[previous.content.length - 1]);
    return;
  }
  const last = messages[messages.length - 1]!;
  const length = last.content.length;
  markBlock(last.content[length - 1]);
  if (length >= 2) markBlock(last.content[length - 2]);
}
