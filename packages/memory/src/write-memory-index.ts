import { join } from 'node:path';
import { type AgentMemoryScope, DelegateError, checkOptionalObject } from '@delegate/core';
import { fileSystemError } from './file-system-error.js';
import { makeMemoryFolder } from './make-memory-folder.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { MEMORY_INDEX_FILE_NAME } from './get-agent-memory-file.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';
import { checkMemoryDirectory, expectedRealDirectory } from './check-memory-directory.js';
import { pathLockKey, withPathLock } from './path-lock.js';
import { writeFileAtomic } from './write-file-atomic.js';

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
  const directory = getAgentMemoryDir(agentType, scope, options);
  const file = join(directory, MEMORY_INDEX_FILE_NAME);
  const check = {
    scope,
    root: getAgentMemoryRoot(scope, options),
    directory,
    cwd: options.cwd ?? process.cwd(),
  };
  checkMemoryDirectory(check);
  // In the queue of appends to the same file: a write made after an append replaces it, and
  // an append made after a write adds to it, whatever finishes first.
  await withPathLock(pathLockKey(file), async () => {
    try {
      await makeMemoryFolder(check);
      // Checked again now that the folder exists, to narrow the window for a swapped-in link.
      checkMemoryDirectory(check);
      await writeFileAtomic(file, content, {
        fsync: options.fsync ?? false,
        expectedDirectory: expectedRealDirectory(check),
      });
    } catch (cause) {
      if (cause instanceof DelegateError) throw cause;
      throw fileSystemError({
        action: 'write the memory index',
        path: file,
        cause,
        details: { agentType, scope },
      });
    }
  });
  return file;
}
