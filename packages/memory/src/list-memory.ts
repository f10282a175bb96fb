import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AgentMemoryScope,
  checkOptionalArray,
  checkOptionalObject,
  checkString,
} from '@delegate/core';
import { checkMemoryDirectory } from './check-memory-directory.js';
import { decodeAgentTypeFromPath } from './decode-agent-type-from-path.js';
import { fileSystemError, systemErrorCode } from './file-system-error.js';
import {
  AGENT_MEMORY_SCOPES,
  type AgentMemoryPathOptions,
  getAgentMemoryRoot,
} from './get-agent-memory-root.js';
import { type MemoryFile, listMemoryFiles } from './list-memory-files.js';
import { sanitizeAgentTypeForPath } from './sanitize-agent-type-for-path.js';

/** Options for listing agent memory. */
export interface ListMemoryOptions extends AgentMemoryPathOptions {
  /** The scopes to look in. Defaults to all three. */
  scopes?: readonly AgentMemoryScope[];
  /**
   * Agent types to recognise folders by. Needed only for names so long that their folder
   * name was cut (and cannot be decoded); other folder names decode on their own.
   */
  knownAgentTypes?: readonly string[];
}

/** One agent's memory folder in one scope. */
export interface AgentMemoryEntry {
  /** The agent type, or undefined when the folder name cannot be traced back to one. */
  agentType: string | undefined;
  /** The scope the folder belongs to. */
  scope: AgentMemoryScope;
  /** The folder name inside the scope root. */
  folderName: string;
  /** The absolute folder path. */
  directory: string;
  /** The files inside, sorted by path. */
  files: MemoryFile[];
  /** The sum of the file sizes in bytes. */
  totalBytes: number;
}

/**
 * Lists every agent memory folder across the requested scopes (user, project, local by
 * default) with its agent type, path, files and sizes. Missing scope roots are skipped.
 */
export async function listMemory(options: ListMemoryOptions = {}): Promise<AgentMemoryEntry[]> {
  checkOptionalObject('listMemory()', 'options', options);
  checkOptionalArray('listMemory()', 'options.scopes', options.scopes);
  checkOptionalArray('listMemory()', 'options.knownAgentTypes', options.knownAgentTypes);
  const known = new Map<string, string>();
  for (const [index, agentType] of (options.knownAgentTypes ?? []).entries()) {
    checkString('listMemory()', `options.knownAgentTypes[${index}]`, agentType);
    if (agentType.length > 0) known.set(sanitizeAgentTypeForPath(agentType), agentType);
  }
  const result: AgentMemoryEntry[] = [];
  for (const scope of options.scopes ?? AGENT_MEMORY_SCOPES) {
    const root = getAgentMemoryRoot(scope, options);
    // Never list a project or local root that a link sends outside the project.
    checkMemoryDirectory({
      scope,
      root,
      directory: root,
      cwd: options.cwd ?? process.cwd(),
      folderMayBeLink: true,
    });
    let entries;
    try {
      entries = await readdir(root, { withFileTypes: true });
    } catch (error) {
      const code = systemErrorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw fileSystemError({
        action: 'list the memory root',
        path: root,
        cause: error,
        details: { scope },
      });
    }
    const folders = entries
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    for (const folderName of folders) {
      const directory = join(root, folderName);
      const files = await listMemoryFiles(directory);
      result.push({
        agentType: known.get(folderName) ?? decodeAgentTypeFromPath(folderName),
        scope,
        folderName,
        directory,
        files,
        totalBytes: files.reduce((sum, file) => sum + file.size, 0),
      });
    }
  }
  return result;
}
