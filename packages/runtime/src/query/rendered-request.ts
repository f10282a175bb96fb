import type Anthropic from '@anthropic-ai/sdk';
import type { ThinkingConfig, ToolUseContext } from '@delegate/core';
import type { ApiToolDefinition } from './build-messages-request.js';

/** The cache-relevant parts of the last request an agent sent, exactly as sent. */
export type RenderedRequestParts = {
  /** System prompt blocks as sent. */
  systemPrompt: string[];
  /** User context rendered into the opening reminder, when there was one. */
  userContext?: Readonly<Record<string, string>>;
  /** System context appended to the system prompt, when there was one. */
  systemContext?: Readonly<Record<string, string>>;
  /** Tool definitions as sent, in order. */
  toolDefinitions: readonly ApiToolDefinition[];
  /** Thinking configuration as sent. */
  thinking?: ThinkingConfig;
};

const parts = new WeakMap<ToolUseContext, RenderedRequestParts>();

/** Records what `context`'s agent sent, so a fork can reuse the bytes. */
export function setRenderedRequestParts(
  context: ToolUseContext,
  value: RenderedRequestParts,
): void {
  parts.set(context, value);
}

/** What `context`'s agent last sent, if it has sent anything. */
export function getRenderedRequestParts(context: ToolUseContext): RenderedRequestParts | undefined {
  return parts.get(context);
}

const lastRequests = new WeakMap<ToolUseContext, Anthropic.MessageCreateParamsStreaming>();

/** Records the body of the last request `context`'s agent sent (a fork's cache diagnosis compares with it). */
export function setLastRequest(
  context: ToolUseContext,
  request: Anthropic.MessageCreateParamsStreaming,
): void {
  lastRequests.set(context, request);
}

/** The body of the last request `context`'s agent sent, if any. */
export function getLastRequest(
  context: ToolUseContext,
): Anthropic.MessageCreateParamsStreaming | undefined {
  return lastRequests.get(context);
}
