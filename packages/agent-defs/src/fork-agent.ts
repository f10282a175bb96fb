import { type AgentDefinition } from '@delegate/core';
import { FORK_AGENT_TYPE } from './agent-types.js';

/**
 * The synthetic definition used on the fork path (no `subagent_type` given while forking
 * is on). It is not a built-in a caller can select: `getBuiltInAgents` does not list it.
 * Tools, model and system prompt all come from the parent so that the fork's request
 * prefix stays byte-identical and reuses the parent's prompt cache; `getSystemPrompt`
 * returns '' because the runtime passes the parent's already rendered prompt instead.
 */
export const FORK_AGENT: AgentDefinition = {
  agentType: FORK_AGENT_TYPE,
  whenToUse:
    'Implicit fork of the current agent that inherits its whole conversation. It cannot be selected by name; it runs when the Agent tool is called without a subagent_type while forking is enabled.',
  tools: ['*'],
  maxTurns: 200,
  model: 'inherit',
  permissionMode: 'bubble',
  source: 'built-in',
  baseDir: 'built-in',
  getSystemPrompt: () => '',
};
