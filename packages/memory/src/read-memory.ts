import { join } from 'node:path';
import { type AgentMemoryScope, DelegateError, checkOptionalObject } from '@delegate/core';
import { fileSystemError } from './file-system-error.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { MEMORY_INDEX_FILE_NAME } from './get-agent-memory-file.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';
import { checkMemoryDirectory } from './check-memory-directory.js';
import { readRegularFile } from './read-regular-file.js';
import { type MemoryFile, listMemoryFiles } from './list-memory-files.js';
import { type MemoryFolder, openMemoryDirectory } from './open-memory-folder.js';

/** An agent's memory in one scope, as stored on disk. */
export interface AgentMemorySnapshot {
  /** The agent type. */
  agentType: string;
  /** The scope. */
  scope: AgentMemoryScope;
  /** The absolute memory folder. */
  directory: string;
  /** The absolute path of MEMORY.md. */
  indexFile: string;
  /** Whether the memory folder exists. */
  exists: boolean;
  /** The whole MEMORY.md (not cut), or undefined when there is none. */
  index: string | undefined;
  /** Every file in the folder, MEMORY.md included, sorted by path. */
  files: MemoryFile[];
}

/**
 * Reads an agent's MEMORY.md (in full, up to 4 MiB) and lists the files in its memory folder.
 * Throws PATH_ESCAPE when the folder is a symbolic link or a project root leaves the project
 * (also when one is swapped in while it reads: everything is read inside the folder held
 * open), and a FILE_SYSTEM_ERROR when MEMORY.md is a link, a FIFO, a device or too big.
 */
export async function readMemory(
  agentType: string,
  scope: AgentMemoryScope,
  options: AgentMemoryPathOptions = {},
): Promise<AgentMemorySnapshot> {
  checkOptionalObject('readMemory()', 'options', options);
  const directory = getAgentMemoryDir(agentType, scope, options);
  const indexFile = join(directory, MEMORY_INDEX_FILE_NAME);
  const check = {
    scope,
    root: getAgentMemoryRoot(scope, options),
    directory,
    cwd: options.cwd ?? process.cwd(),
  };
  checkMemoryDirectory(check);
  let folder: MemoryFolder | undefined;
  try {
    folder = openMemoryDirectory(check);
  } catch (error) {
    if (DelegateError.isInstance(error)) throw error;
    throw fileSystemError({
      action: 'open the memory folder',
      path: directory,
      cause: error,
      details: { agentType, scope },
    });
  }
  if (folder === undefined) {
    return { agentType, scope, directory, indexFile, exists: false, index: undefined, files: [] };
  }
  try {
    let index: string | undefined;
    try {
      index = await readRegularFile(folder.at(MEMORY_INDEX_FILE_NAME));
    } catch (error) {
      throw fileSystemError({
        action: 'read the memory index',
        path: indexFile,
        cause: error,
        details: { agentType, scope },
      });
    }
    const files = await listMemoryFiles(folder);
    return { agentType, scope, directory, indexFile, exists: true, index, files };
  } finally {
    folder.close();
  }
}
