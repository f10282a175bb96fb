import { join } from 'node:path';
import { type AgentMemoryScope, DelegateError } from '@delegate/core';
import {
  type MemoryDirectoryCheck,
  checkMemoryDirectory,
  expectedRealDirectory,
} from './check-memory-directory.js';
import { fileSystemError } from './file-system-error.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { MEMORY_INDEX_FILE_NAME } from './get-agent-memory-file.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';
import { makeMemoryFolder } from './make-memory-folder.js';
import { openMemoryDirectory } from './open-memory-folder.js';
import { pathLockKey, withPathLock } from './path-lock.js';
import { hasProcDescriptors } from './proc-descriptors.js';
import { notAFolder, writeFileAtomic } from './write-file-atomic.js';

/** MEMORY.md as a change sees it. */
export interface MemoryIndexTarget {
  /** The path to read the current MEMORY.md by (inside the memory folder held open, on Linux). */
  readPath: string;
  /** Replaces MEMORY.md atomically, inside the checked memory folder. */
  write(content: string): Promise<void>;
}

/**
 * Runs `change` on MEMORY.md inside the memory folder. On Linux the folder is held open,
 * reached from the project without following any link (`openMemoryDirectory`), and the file
 * is read, written and renamed inside that descriptor, so a folder on the way swapped for a
 * link at any moment cannot make the change read or write outside. Without /proc the
 * temporary file's real location is checked after it is made.
 */
async function changeInFolder(options: {
  check: MemoryDirectoryCheck;
  file: string;
  fsync: boolean;
  change: (target: MemoryIndexTarget) => Promise<void>;
}): Promise<void> {
  const { check, file, fsync } = options;
  if (!hasProcDescriptors()) {
    const expectedDirectory = expectedRealDirectory(check);
    await options.change({
      readPath: file,
      write: (content) => writeFileAtomic(file, content, { fsync, expectedDirectory }),
    });
    return;
  }
  const folder = openMemoryDirectory(check);
  if (folder === undefined) throw await notAFolder(check.directory);
  try {
    await options.change({
      readPath: folder.at(MEMORY_INDEX_FILE_NAME),
      write: (content) => writeFileAtomic(file, content, { fsync, folder }),
    });
  } finally {
    folder.close();
  }
}

/**
 * Changes an agent's MEMORY.md: in the queue of changes to that file (a write made after an
 * append replaces it, an append made after a write adds to it, whatever finishes first), once
 * the memory folder exists and has passed its checks (before and after it is made, to narrow
 * the window for a swapped-in link). `change` gets where to read the current file and how to
 * write the new one; an error that is not a DelegateError becomes a FILE_SYSTEM_ERROR naming
 * `action`. Returns the file's path.
 */
export async function changeMemoryIndex(options: {
  agentType: string;
  scope: AgentMemoryScope;
  paths: AgentMemoryPathOptions;
  /** Flush the new file to disk before it replaces the old one. */
  fsync: boolean;
  /** What is done, for the error: `write the memory index`. */
  action: string;
  change: (target: MemoryIndexTarget) => Promise<void>;
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
      await changeInFolder({ check, file, fsync: options.fsync, change: options.change });
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
