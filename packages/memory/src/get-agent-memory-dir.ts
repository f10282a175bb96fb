import { type AgentMemoryScope, checkOptionalObject } from '@delegate/core';
import { join } from 'node:path';
import { assertInsideRoot } from './assert-inside-root.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';
import { sanitizeAgentTypeForPath } from './sanitize-agent-type-for-path.js';

/**
 * Returns the absolute memory folder of one agent type in one scope, without a trailing
 * separator: `<scope root>/<sanitized agent type>`.
 */
export function getAgentMemoryDir(
  agentType: string,
  scope: AgentMemoryScope,
  options: AgentMemoryPathOptions = {},
): string {
  checkOptionalObject('getAgentMemoryDir()', 'options', options);
  const root = getAgentMemoryRoot(scope, options);
  const directory = join(root, sanitizeAgentTypeForPath(agentType));
  assertInsideRoot(root, directory);
  return directory;
}
