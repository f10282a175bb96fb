import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AgentMemoryScope,
  DelegateError,
  checkOptionalArray,
  checkOptionalObject,
  checkString,
} from '@delegate/core';
import { type MemoryDirectoryCheck, checkMemoryDirectory } from './check-memory-directory.js';
import { decodeAgentTypeFromPath } from './decode-agent-type-from-path.js';
import { fileSystemError, systemErrorCode } from './file-system-error.js';
import {
  AGENT_MEMORY_SCOPES,
  type AgentMemoryPathOptions,
  getAgentMemoryRoot,
} from './get-agent-memory-root.js';
import { type MemoryFile, listMemoryFiles } from './list-memory-files.js';
import { type MemoryFolder, openMemoryRoot } from './open-memory-folder.js';
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

function openRoot(check: MemoryDirectoryCheck): MemoryFolder | undefined {
  try {
    return openMemoryRoot(check);
  } catch (error) {
    if (DelegateError.isInstance(error)) throw error;
    throw fileSystemError({
      action: 'list the memory root',
      path: check.root,
      cause: error,
      details: { scope: check.scope },
    });
  }
}

/** The folders in a scope root, sorted; none when the root vanished. */
async function listFolderNames(rootFolder: MemoryFolder): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(rootFolder.at(), { withFileTypes: true });
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw fileSystemError({ action: 'list the memory root', path: rootFolder.shown, cause: error });
  }
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** The files of one agent folder, or undefined when it is gone or is (or became) a link. */
async function listAgentFolder(
  rootFolder: MemoryFolder,
  folderName: string,
): Promise<MemoryFile[] | undefined> {
  let folder: MemoryFolder | undefined;
  try {
    folder = rootFolder.child(folderName);
  } catch (error) {
    if (DelegateError.hasCode(error, 'PATH_ESCAPE')) return undefined;
    throw fileSystemError({
      action: 'list the memory folder',
      path: join(rootFolder.shown, folderName),
      cause: error,
    });
  }
  if (folder === undefined) return undefined;
  try {
    return await listMemoryFiles(folder);
  } finally {
    folder.close();
  }
}

/**
 * Lists every agent memory folder across the requested scopes (user, project, local by
 * default) with its agent type, path, files and sizes. Missing scope roots are skipped.
 * Each root is held open while it is listed, and each folder in it is opened inside it
 * without following a link, so a folder swapped for a link meanwhile is never listed.
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
    const check = {
      scope,
      root,
      directory: root,
      cwd: options.cwd ?? process.cwd(),
      folderMayBeLink: true,
    };
    // Never list a project or local root that a link sends outside the project.
    checkMemoryDirectory(check);
    const rootFolder = openRoot(check);
    if (rootFolder === undefined) continue;
    try {
      for (const folderName of await listFolderNames(rootFolder)) {
        const files = await listAgentFolder(rootFolder, folderName);
        if (files === undefined) continue;
        result.push({
          agentType: known.get(folderName) ?? decodeAgentTypeFromPath(folderName),
          scope,
          folderName,
          directory: join(root, folderName),
          files,
          totalBytes: files.reduce((sum, file) => sum + file.size, 0),
        });
      }
    } finally {
      rootFolder.close();
    }
  }
  return result;
}
