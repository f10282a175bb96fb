import {
  type AgentMemoryScope,
  DelegateError,
  errorMessage,
  invalidArgument,
  checkOptionalObject,
} from '@delegate/core';
import { buildAgentMemoryPrompt } from './build-agent-memory-prompt.js';
import { fileSystemError } from './file-system-error.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { MEMORY_INDEX_FILE_NAME } from './get-agent-memory-file.js';
import { type AgentMemoryPathOptions, getAgentMemoryRoot } from './get-agent-memory-root.js';
import { type MemoryDirectoryCheck, checkMemoryDirectory } from './check-memory-directory.js';
import { makeMemoryFolder } from './make-memory-folder.js';
import { type MemoryFolder, openMemoryDirectory } from './open-memory-folder.js';
import { showDescriptorPaths } from './proc-descriptors.js';
import {
  DEFAULT_MEMORY_INDEX_MAX_BYTES,
  DEFAULT_MEMORY_INDEX_MAX_LINES,
  type MemoryIndexRead,
  readBoundedMemoryIndex,
} from './read-bounded-memory-index.js';
import { join } from 'node:path';

/** Options for building the memory prompt. */
export interface AgentMemoryPromptOptions extends AgentMemoryPathOptions {
  /** At most this many MEMORY.md lines go into the prompt. Defaults to 200. */
  maxLines?: number;
  /** At most this many MEMORY.md bytes go into the prompt. Defaults to 25 KiB. */
  maxBytes?: number;
  /**
   * Called when the memory folder cannot be created or MEMORY.md cannot be read.
   * Defaults to a process warning (`process.emitWarning`).
   */
  onError?: (error: DelegateError) => void;
}

/** The memory prompt together with the folder being created behind it. */
export interface PreparedAgentMemory {
  /** The memory section of the system prompt. */
  prompt: string;
  /** The absolute memory folder (no trailing separator). */
  directory: string;
  /** The absolute path of MEMORY.md. */
  indexFile: string;
  /**
   * Settles once the folder exists. Rejects with the same DelegateError passed to
   * `onError` when it cannot be created; ignoring it is safe (no unhandled rejection).
   */
  ready: Promise<void>;
}

function positiveLimit(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 1) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `The memory prompt option "${name}" must be a number of at least 1; got ${String(value)}.`,
      { details: { [name]: value } },
    );
  }
  return Math.floor(value);
}

function report(onError: AgentMemoryPromptOptions['onError'], error: DelegateError): void {
  try {
    if (onError === undefined) process.emitWarning(error.message, { code: 'DELEGATE_MEMORY' });
    else onError(error);
  } catch {
    // A failing reporter must not turn a reported problem into a crash.
  }
}

/**
 * Reads MEMORY.md inside the memory folder held open (see `openMemoryDirectory`), so the
 * folder checked is the folder read even if a folder on the way is swapped for a link.
 */
function readIndexInFolder(
  check: MemoryDirectoryCheck,
  limits: { maxLines: number; maxBytes: number },
): MemoryIndexRead {
  let folder: MemoryFolder | undefined;
  try {
    folder = openMemoryDirectory(check);
  } catch (error) {
    return { status: 'unreadable', reason: errorMessage(error), error };
  }
  if (folder === undefined) return { status: 'missing' };
  try {
    const index = readBoundedMemoryIndex(folder.at(MEMORY_INDEX_FILE_NAME), limits);
    return index.status === 'unreadable'
      ? { ...index, reason: showDescriptorPaths(index.reason) }
      : index;
  } finally {
    folder.close();
  }
}

/**
 * Builds the memory prompt synchronously and starts creating the memory folder in the
 * background (`mkdir -p`), without making the caller wait. Failures are reported through
 * `onError` and the `ready` promise, never thrown; only bad arguments throw.
 */
export function prepareAgentMemory(
  agentType: string,
  scope: AgentMemoryScope,
  options: AgentMemoryPromptOptions = {},
): PreparedAgentMemory {
  checkOptionalObject('prepareAgentMemory()', 'options', options);
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw invalidArgument({
      where: 'prepareAgentMemory()',
      option: 'options.onError',
      expected: 'a function',
      value: options.onError,
    });
  }
  const directory = getAgentMemoryDir(agentType, scope, options);
  const indexFile = join(directory, MEMORY_INDEX_FILE_NAME);
  const maxLines = positiveLimit('maxLines', options.maxLines, DEFAULT_MEMORY_INDEX_MAX_LINES);
  const maxBytes = positiveLimit('maxBytes', options.maxBytes, DEFAULT_MEMORY_INDEX_MAX_BYTES);

  let escape: DelegateError | undefined;
  const check = {
    scope,
    root: getAgentMemoryRoot(scope, options),
    directory,
    cwd: options.cwd ?? process.cwd(),
  };
  try {
    checkMemoryDirectory(check);
  } catch (cause) {
    escape =
      cause instanceof DelegateError
        ? cause
        : fileSystemError({
            action: 'check the memory folder',
            path: directory,
            cause,
            details: { agentType, scope },
          });
  }
  if (escape !== undefined) {
    // Neither create nor read anything through a link that leaves the memory root.
    report(options.onError, escape);
    const ready = Promise.reject(escape);
    ready.catch(() => undefined);
    const index = { status: 'unreadable', reason: escape.message, error: escape } as const;
    const prompt = buildAgentMemoryPrompt({ agentType, scope, directory, index, maxLines });
    return { prompt, directory, indexFile, ready };
  }

  const ready = makeMemoryFolder(check).then(
    () => undefined,
    (cause: unknown) => {
      const error = DelegateError.isInstance(cause)
        ? cause
        : fileSystemError({
            action: 'create the memory folder',
            path: directory,
            cause,
            details: { agentType, scope },
          });
      report(options.onError, error);
      throw error;
    },
  );
  // Callers that never look at `ready` must not get an unhandled rejection.
  ready.catch(() => undefined);

  const index = readIndexInFolder(check, { maxLines, maxBytes });
  if (index.status === 'unreadable') {
    report(
      options.onError,
      DelegateError.isInstance(index.error)
        ? index.error
        : fileSystemError({
            action: 'read the memory index',
            path: indexFile,
            cause: index.error ?? new Error(index.reason),
            details: { agentType, scope },
          }),
    );
  }
  const prompt = buildAgentMemoryPrompt({ agentType, scope, directory, index, maxLines });
  return { prompt, directory, indexFile, ready };
}
