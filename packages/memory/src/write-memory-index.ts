import { type AgentMemoryScope, DelegateError, checkOptionalObject } from '@delegate/core';
import { type AgentMemoryPathOptions } from './get-agent-memory-root.js';
import { changeMemoryIndex } from './change-memory-index.js';

/** Options for writing MEMORY.md. */
export interface WriteMemoryIndexOptions extends AgentMemoryPathOptions {
  /** Flush the file to disk before it replaces the old one. Slower; off by default. */
  fsync?: boolean;
}

/**
 * Replaces an agent's MEMORY.md atomically (temporary file + rename), creating the
 * memory folder if needed, and returns the file's path. Concurrent writers never leave a
 * torn file: the last rename wins.
 */
export async function writeMemoryIndex(
  agentType: string,
  scope: AgentMemoryScope,
  content: string,
  options: WriteMemoryIndexOptions = {},
): Promise<string> {
  checkOptionalObject('writeMemoryIndex()', 'options', options);
  if (typeof content !== 'string') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `MEMORY.md content for agent "${agentType}" must be a string; got ${typeof content}.`,
      { details: { agentType, scope } },
    );
  }
  return changeMemoryIndex({
    agentType,
    scope,
    paths: options,
    fsync: options.fsync ?? false,
    action: 'write the memory index',
    change: (target) => target.write(content),
  });
}
