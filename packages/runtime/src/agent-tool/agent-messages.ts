import {
  type AgentDefinition,
  type AssistantMessage,
  type Message,
  createUserMessage,
} from '@delegate/core';
import { buildForkedMessages, buildWorktreeNotice } from '@delegate/fork-cache';

/**
 * A fork's starting conversation: the parent's history without the calling assistant
 * message, then `buildForkedMessages` (that whole message, identical placeholder results,
 * one directive block). The worktree notice joins the directive (the one block that
 * differs per sibling), so the placeholders before it stay a shared, cacheable prefix.
 */
export function forkMessages(options: {
  history: readonly Message[];
  parentAssistant: AssistantMessage;
  prompt: string;
  worktree?: { parentCwd: string; worktreeCwd: string };
}): Message[] {
  const { parentAssistant, worktree } = options;
  const history = options.history.filter((message) => message.uuid !== parentAssistant.uuid);
  const directive = worktree
    ? `${options.prompt}\n\n${buildWorktreeNotice(worktree.parentCwd, worktree.worktreeCwd)}`
    : options.prompt;
  return [...history, ...buildForkedMessages(directive, parentAssistant)];
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
