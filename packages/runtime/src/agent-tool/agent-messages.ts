import {
  type AgentDefinition,
  type AssistantMessage,
  type Message,
  createUserMessage,
} from '@delegate/core';
import {
  type ForkLayout,
  DEFAULT_FORK_LAYOUT,
  buildForkChildMessages,
  buildWorktreeNotice,
} from '@delegate/fork-cache';

/** The layout a child is built in: `per-child` needs its own call, so without one it shares the message. */
export function forkLayoutFor(
  layout: ForkLayout,
  parentAssistant: AssistantMessage,
  toolUseId: string | undefined,
): ForkLayout {
  if (layout !== 'per-child') return layout;
  const calls = parentAssistant.message.content.filter((block) => block.type === 'tool_use');
  const known = toolUseId !== undefined && calls.some((block) => block.id === toolUseId);
  return known || calls.length <= 1 ? 'per-child' : 'shared-message';
}

/**
 * A fork's starting conversation: the parent's history without the calling assistant
 * message, then `buildForkChildMessages` in the session's layout, with the worker rules in
 * the parent's prefix (the Agent tool's description carries them, so the child holds only
 * the short notice block): the copied assistant turn (`shared-message`: every call;
 * `per-child`: only this child's), placeholder results, the notice, and the directive. The
 * worktree notice joins the directive (the one block that differs per sibling), so the
 * blocks before it stay a shared, cacheable prefix.
 */
export function forkMessages(options: {
  history: readonly Message[];
  parentAssistant: AssistantMessage;
  prompt: string;
  toolUseId?: string;
  layout?: ForkLayout;
  worktree?: { parentCwd: string; worktreeCwd: string };
}): Message[] {
  const { parentAssistant, worktree, toolUseId } = options;
  const history = options.history.filter((message) => message.uuid !== parentAssistant.uuid);
  const directive = worktree
    ? `${options.prompt}\n\n${buildWorktreeNotice(worktree.parentCwd, worktree.worktreeCwd)}`
    : options.prompt;
  const layout = forkLayoutFor(options.layout ?? DEFAULT_FORK_LAYOUT, parentAssistant, toolUseId);
  const own = buildForkChildMessages({
    directive,
    assistantMessage: parentAssistant,
    layout,
    rulesPlacement: 'parent-prefix',
    ...(toolUseId !== undefined && layout === 'per-child' ? { toolUseId } : {}),
  });
  return [...history, ...own];
}

/** A fresh agent's starting conversation: one user message, opened by the definition's `initialPrompt`. */
export function freshAgentMessages(options: {
  agent: AgentDefinition;
  prompt: string;
  agentId: string;
}): Message[] {
  const { agent, prompt, agentId } = options;
  const text = agent.initialPrompt ? `${agent.initialPrompt}\n\n${prompt}` : prompt;
  return [createUserMessage({ content: text, agentId })];
}
