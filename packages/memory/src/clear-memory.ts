import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { type AgentMemoryScope, DelegateError, checkOptionalObject } from '@delegate/core';
import { assertInsideRoot } from './assert-inside-root.js';
import { checkMemoryDirectory } from './check-memory-directory.js';
import { fileSystemError, systemErrorCode } from './file-system-error.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';
import { type MemoryFolder, openMemoryRoot } from './open-memory-folder.js';
import { removeFolderEntry } from './remove-folder-entry.js';

/**
 * Removes one agent's memory folder in one scope and returns whether there was one.
 * Only a direct child of the scope root is ever removed; a symbolic link in its place is
 * removed as a link (its target is left alone). On Linux the tree is removed through open
 * folder descriptors, so a folder swapped for a link meanwhile cannot make it delete
 * anything outside; without /proc/self/fd by path, never following a link inside the folder,
 * after the link checks (a swap of a folder above it racing the removal is not ruled out).
 */
export async function clearMemory(
  agentType: string,
  scope: AgentMemoryScope,
  options: AgentMemoryPathOptions = {},
): Promise<boolean> {
  checkOptionalObject('clearMemory()', 'options', options);
  const root = getAgentMemoryRoot(scope, options);
  const directory = getAgentMemoryDir(agentType, scope, options);
  assertInsideRoot(root, directory);
  if (dirname(directory) !== root) {
    throw new DelegateError(
      'PATH_ESCAPE',
      `Refusing to clear "${directory}": it is not a folder directly inside the memory root "${root}".`,
      { details: { root, directory, agentType, scope } },
    );
  }
  const check = {
    scope,
    root,
    directory,
    cwd: options.cwd ?? process.cwd(),
    folderMayBeLink: true,
  };
  // A root linked out of the project is refused here with a message that says where it
  // leads; a link swapped in later is caught by the descriptors below.
  checkMemoryDirectory(check);
  let rootFolder: MemoryFolder | undefined;
  try {
    rootFolder = openMemoryRoot(check);
    if (rootFolder === undefined) return false;
    const name = basename(directory);
    const found = await lstat(rootFolder.at(name)).catch((error: unknown) => {
      const code = systemErrorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    });
    if (found === undefined) return false;
    await removeFolderEntry(rootFolder, name);
    return true;
  } catch (error) {
    if (DelegateError.isInstance(error)) throw error;
    throw fileSystemError({
      action: 'clear the memory folder',
      path: directory,
      cause: error,
      details: { agentType, scope },
    });
  } finally {
    rootFolder?.close();
  }
}
