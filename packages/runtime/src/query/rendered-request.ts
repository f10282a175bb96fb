import type { ThinkingConfig, ToolUseContext } from '@delegate/core';
import type { ApiToolDefinition } from './build-messages-request.js';

/** The cache-relevant parts of the last request an agent sent, exactly as sent. */
export type RenderedRequestParts = {
  systemPrompt: string[];
  userContext?: Readonly<Record<string, string>>;
  systemContext?: Readonly<Record<string, string>>;
  toolDefinitions: readonly ApiToolDefinition[];
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
