import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AgentMemoryScope, DelegateError } from '@delegate/core';
import { fileSystemError, systemErrorCode } from './file-system-error.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { MEMORY_INDEX_FILE_NAME } from './get-agent-memory-file.js';
import { withPathLock } from './path-lock.js';
import { writeFileAtomic } from './write-file-atomic.js';
import { type WriteMemoryIndexOptions } from './write-memory-index.js';

async function readIfPresent(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return '';
    throw error;
  }
}

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
  if (typeof entry !== 'string' || entry.trim().length === 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `A memory entry for agent "${agentType}" must be a non-empty string.`,
      { details: { agentType, scope } },
    );
  }
  const directory = getAgentMemoryDir(agentType, scope, options);
  const file = join(directory, MEMORY_INDEX_FILE_NAME);
  const block = entry.endsWith('\n') ? entry : `${entry}\n`;
  await withPathLock(file, async () => {
    try {
      await mkdir(directory, { recursive: true });
      const current = await readIfPresent(file);
      const separator = current.length === 0 || current.endsWith('\n') ? '' : '\n';
      await writeFileAtomic(file, current + separator + block, { fsync: options.fsync ?? false });
    } catch (cause) {
      throw fileSystemError({
        action: 'append to the memory index',
        path: file,
        cause,
        details: { agentType, scope },
      });
    }
  });
  return file;
}
