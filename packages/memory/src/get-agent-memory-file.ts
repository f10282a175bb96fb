import { type AgentMemoryScope, checkOptionalObject } from '@delegate/core';
import { join } from 'node:path';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { type AgentMemoryPathOptions } from './get-agent-memory-root.js';

/** The name of the index file in every agent memory folder. */
export const MEMORY_INDEX_FILE_NAME = 'MEMORY.md';

/** Returns the absolute path of an agent's `MEMORY.md` in one scope. */
export function getAgentMemoryFile(
  agentType: string,
  scope: AgentMemoryScope,
  options: AgentMemoryPathOptions = {},
): string {
  checkOptionalObject('getAgentMemoryFile()', 'options', options);
  return join(getAgentMemoryDir(agentType, scope, options), MEMORY_INDEX_FILE_NAME);
}
