import { type AssistantMessage, type Message, TOOL_NAMES } from '@delegate/core';
import {
  type ForkLayout,
  estimateSiblingSharedTokens,
  shouldWaitForFirstSibling,
} from '@delegate/fork-cache';

/** Agent calls of the assistant turn that start forks (no `subagent_type`, or `fork`). */
export function countForkSiblings(parentAssistant: AssistantMessage): number {
  return parentAssistant.message.content.filter((block) => {
    if (block.type !== 'tool_use') return false;
    if (block.name !== TOOL_NAMES.agent && block.name !== TOOL_NAMES.agentLegacy) return false;
    const type = (block.input as { subagent_type?: unknown } | null)?.subagent_type;
    return type === undefined || type === 'fork';
  }).length;
}

/**
 * True when sibling forks should wait for the first sibling's response to begin before
 * they send their first request. A cache entry is readable only once the response that
 * writes it has begun, so a sibling that does not wait writes again what the siblings share
 * after the parent's cached history; waiting saves `(siblings - 1) × shared` written tokens
 * and costs the fan-out one time to first token. It is worth it only from
 * `DEFAULT_MINIMUM_SAVED_TOKENS` (4,096) saved tokens (`shouldWaitForFirstSibling`). In the
 * `per-child` layout siblings share nothing after the parent's history (and the worker rules
 * are in the parent's prefix, which the parent's own request already cached): never.
 */
export function siblingsShouldWait(options: {
  layout: ForkLayout;
  parentAssistant: AssistantMessage;
  childMessages: readonly Message[];
}): boolean {
  const siblings = countForkSiblings(options.parentAssistant);
  if (options.layout === 'per-child' || siblings < 2) return false;
  const own = options.childMessages
    .slice(-2)
    .flatMap((message) =>
      message.type === 'user' || message.type === 'assistant'
        ? [{ role: message.message.role, content: message.message.content }]
        : [],
    );
  const sharedTokens = estimateSiblingSharedTokens({ layout: options.layout, childMessages: own });
  return shouldWaitForFirstSibling({ layout: options.layout, siblings, sharedTokens });
}
