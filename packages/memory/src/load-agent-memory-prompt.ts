import { type AgentMemoryScope, checkOptionalObject } from '@delegate/core';
import { type AgentMemoryPromptOptions, prepareAgentMemory } from './prepare-agent-memory.js';

/**
 * Returns the memory section of an agent's system prompt (synchronously) and creates the
 * memory folder in the background; use `prepareAgentMemory` to await the folder.
 */
export function loadAgentMemoryPrompt(
  agentType: string,
  scope: AgentMemoryScope,
  options: AgentMemoryPromptOptions = {},
): string {
  checkOptionalObject('loadAgentMemoryPrompt()', 'options', options);
  return prepareAgentMemory(agentType, scope, options).prompt;
}
