import { join } from 'node:path';
import { type AgentMemoryScope, DelegateError } from '@delegate/core';
import { checkMemoryDirectory, expectedRealDirectory } from './check-memory-directory.js';
import { fileSystemError } from './file-system-error.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { MEMORY_INDEX_FILE_NAME } from './get-agent-memory-file.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';
import { makeMemoryFolder } from './make-memory-folder.js';
import { pathLockKey, withPathLock } from './path-lock.js';

/**
 * Changes an agent's MEMORY.md: in the queue of changes to that file (a write made after an
 * append replaces it, an append made after a write adds to it, whatever finishes first), once
 * the memory folder exists and has passed its checks (before and after it is made, to narrow
 * the window for a swapped-in link). `change` gets the file and the real path its folder must
 * have; an error that is not a DelegateError becomes a FILE_SYSTEM_ERROR naming `action`.
 * Returns the file's path.
 */
export async function changeMemoryIndex(options: {
  agentType: string;
  scope: AgentMemoryScope;
  paths: AgentMemoryPathOptions;
  /** What is done, for the error: `write the memory index`. */
  action: string;
  change: (file: string, expectedDirectory: string) => Promise<void>;
}): Promise<string> {
  const { agentType, scope, paths } = options;
  const directory = getAgentMemoryDir(agentType, scope, paths);
  const file = join(directory, MEMORY_INDEX_FILE_NAME);
  const check = {
    scope,
    root: getAgentMemoryRoot(scope, paths),
    directory,
    cwd: paths.cwd ?? process.cwd(),
  };
  checkMemoryDirectory(check);
  await withPathLock(pathLockKey(file), async () => {
    try {
      await makeMemoryFolder(check);
      checkMemoryDirectory(check);
      await options.change(file, expectedRealDirectory(check));
    } catch (cause) {
      if (cause instanceof DelegateError) throw cause;
      throw fileSystemError({
        action: options.action,
        path: file,
        cause,
        details: { agentType, scope },
      });
    }
  });
  return file;
}
