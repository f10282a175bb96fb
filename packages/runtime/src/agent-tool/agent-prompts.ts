import { type AgentDefinition, DelegateError } from '@delegate/core';
import type { RenderedRequestParts } from '../query/rendered-request.js';
import {
  enhanceSystemPromptWithEnvDetails,
  getEnvironmentDetails,
} from '../session/system-prompt.js';

/** What an agent's requests open with. */
export type AgentPrompts = {
  /** System prompt blocks. */
  systemPrompt: string[];
  /** User context of the opening reminder. */
  userContext?: Record<string, string>;
  /** System context after the system prompt. */
  systemContext?: Record<string, string>;
};

/**
 * A fork's prompts: the parent's rendered bytes. Without the parent's rendered request
 * there is no prefix to share, and rebuilding it could differ byte for byte: refuse rather
 * than fork with a different prompt.
 */
export function forkPrompts(parentParts: RenderedRequestParts | undefined): AgentPrompts {
  if (!parentParts) {
    throw new DelegateError(
      'CACHE_UNSAFE',
      'A fork needs the request its parent last sent, and this agent has not sent one yet. Name a subagent_type instead.',
    );
  }
  return {
    systemPrompt: parentParts.systemPrompt,
    ...(parentParts.userContext ? { userContext: { ...parentParts.userContext } } : {}),
    ...(parentParts.systemContext ? { systemContext: { ...parentParts.systemContext } } : {}),
  };
}

/**
 * A fresh agent's prompts: its own prompt, its memory section, notes on reporting and the
 * environment; the parent's user context, without project instructions for agents that
 * omit them (read-only agents: the caller interprets their findings).
 */
export function freshAgentPrompts(options: {
  agent: AgentDefinition;
  cwd: string;
  model: string;
  memoryPrompt: string | undefined;
  parentParts: RenderedRequestParts | undefined;
  additionalWorkingDirectories: readonly string[];
}): AgentPrompts {
  const { agent, cwd, model } = options;
  const own = agent.getSystemPrompt({ cwd });
  const prompt = options.memoryPrompt ? `${own}\n\n${options.memoryPrompt}` : own;
  const systemPrompt = enhanceSystemPromptWithEnvDetails(
    [prompt],
    getEnvironmentDetails({
      cwd,
      model,
      additionalWorkingDirectories: options.additionalWorkingDirectories,
    }),
  );
  const userContext = options.parentParts?.userContext
    ? { ...options.parentParts.userContext }
    : undefined;
  if (userContext && agent.omitClaudeMd) delete userContext['projectInstructions'];
  const keep = userContext && Object.keys(userContext).length > 0;
  return { systemPrompt, ...(keep ? { userContext } : {}) };
}
