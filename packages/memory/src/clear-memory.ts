import { lstat, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type AgentMemoryScope, DelegateError, checkOptionalObject } from '@delegate/core';
import { assertInsideRoot } from './assert-inside-root.js';
import { checkMemoryDirectory } from './check-memory-directory.js';
import { fileSystemError, systemErrorCode } from './file-system-error.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';

/**
 * Removes one agent's memory folder in one scope and returns whether there was one.
 * Only a direct child of the scope root is ever removed; a symbolic link in its place is
 * removed as a link (its target is left alone).
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
  // A root linked out of the project would make `rm` delete a folder elsewhere.
  checkMemoryDirectory({
    scope,
    root,
    directory,
    cwd: options.cwd ?? process.cwd(),
    folderMayBeLink: true,
  });
  try {
    await lstat(directory);
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw fileSystemError({
      action: 'clear the memory folder',
      path: directory,
      cause: error,
      details: { agentType, scope },
    });
  }
  try {
    await rm(directory, { recursive: true, force: true });
  } catch (error) {
    throw fileSystemError({
      action: 'clear the memory folder',
      path: directory,
      cause: error,
      details: { agentType, scope },
    });
  }
  return true;
}
