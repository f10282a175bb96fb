import { type AgentMemoryScope, DelegateError, checkOptionalObject } from '@delegate/core';
import { readRegularFile } from './read-regular-file.js';
import { changeMemoryIndex } from './change-memory-index.js';
import { type WriteMemoryIndexOptions } from './write-memory-index.js';

/**
 * Adds one entry (a line or a block) to the end of an agent's MEMORY.md, atomically, and
 * returns the file's path. Appends from this process to the same file are queued, so none
 * is lost; appends from other processes at the same moment may still overwrite each other.
 */
export async function appendMemoryEntry(
  agentType: string,
  scope: AgentMemoryScope,
  entry: string,
  options: WriteMemoryIndexOptions = {},
): Promise<string> {
  checkOptionalObject('appendMemoryEntry()', 'options', options);
  if (typeof entry !== 'string' || entry.trim().length === 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `A memory entry for agent "${agentType}" must be a non-empty string.`,
      { details: { agentType, scope } },
    );
  }
  const block = entry.endsWith('\n') ? entry : `${entry}\n`;
  return changeMemoryIndex({
    agentType,
    scope,
    paths: options,
    fsync: options.fsync ?? false,
    action: 'append to the memory index',
    change: async (target) => {
      const current = (await readRegularFile(target.readPath)) ?? '';
      const separator = current.length === 0 || current.endsWith('\n') ? '' : '\n';
      await target.write(current + separator + block);
    },
  });
}
