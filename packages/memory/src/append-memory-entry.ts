import { join } from 'node:path';
import { type AgentMemoryScope, DelegateError, checkOptionalObject } from '@delegate/core';
import { checkMemoryDirectory, expectedRealDirectory } from './check-memory-directory.js';
import { fileSystemError } from './file-system-error.js';
import { makeMemoryFolder } from './make-memory-folder.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { MEMORY_INDEX_FILE_NAME } from './get-agent-memory-file.js';
import { getAgentMemoryRoot } from './get-agent-memory-root.js';
import { pathLockKey, withPathLock } from './path-lock.js';
import { readRegularFile } from './read-regular-file.js';
import { writeFileAtomic } from './write-file-atomic.js';
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
  const directory = getAgentMemoryDir(agentType, scope, options);
  const file = join(directory, MEMORY_INDEX_FILE_NAME);
  const block = entry.endsWith('\n') ? entry : `${entry}\n`;
  const check = {
    scope,
    root: getAgentMemoryRoot(scope, options),
    directory,
    cwd: options.cwd ?? process.cwd(),
  };
  await withPathLock(pathLockKey(file), async () => {
    checkMemoryDirectory(check);
    try {
      await makeMemoryFolder(check);
      checkMemoryDirectory(check);
      const current = (await readRegularFile(file)) ?? '';
      const separator = current.length === 0 || current.endsWith('\n') ? '' : '\n';
      await writeFileAtomic(file, current + separator + block, {
        fsync: options.fsync ?? false,
        expectedDirectory: expectedRealDirectory(check),
      });
    } catch (cause) {
      if (cause instanceof DelegateError) throw cause;
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
