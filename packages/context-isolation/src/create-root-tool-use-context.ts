import { setMaxListeners } from 'node:events';
import type {
  AgentEvent,
  AppState,
  FileStateCache,
  Message,
  Tool,
  ToolUseContext,
  ToolUseOptions,
} from '@delegate/core';
import { checkMaxListeners } from './check-max-listeners.js';
import { createAppStateStore } from './create-app-state-store.js';
import { DEFAULT_ABORT_MAX_LISTENERS } from './create-child-abort-controller.js';
import { createFileStateCache } from './create-file-state-cache.js';
import type { FileStateCacheLimits } from './lru-file-state-cache.js';

/** Options of {@link createRootToolUseContext}. */
export type RootToolUseContextOptions = {
  /** Working directory of the main agent. */
  cwd: string;
  /** Tools of the main agent. */
  tools: Tool[];
  /** Model id of the main agent. */
  model: string;
  /** Initial application state, laid over the defaults (`default` mode, no rules, no tasks). */
  appState?: Partial<AppState>;
  /** Other agent options (`querySource`, `thinking`, `agentDefinitions`…); `tools` and `model` win. */
  options?: Partial<ToolUseOptions>;
  /** Conversation so far; default empty. */
  messages?: Message[];
  /** File-read cache to use; default a new cache with `fileStateCacheLimits`. */
  readFileState?: FileStateCache;
  /** Limits of the new file-read cache; default 100 entries and 25 MiB. */
  fileStateCacheLimits?: Partial<FileStateCacheLimits>;
  /** Abort controller of the session; default a new one. */
  abortController?: AbortController;
  /** Listener limit of a new controller's signal (one listener per live child); default 50, 0 for none. */
  maxAbortListeners?: number;
  /** Limits on file reads. */
  fileReadingLimits?: { maxBytes?: number; maxLines?: number };
  /** Receives lifecycle events. */
  emit?: (event: AgentEvent) => void;
};

/**
 * Builds the context of a main-thread agent: one in-memory app-state store behind
 * `getAppState`, `setAppState` and `setAppStateForTasks`, a fresh file-read cache, a
 * new abort controller. It has no `agentId` and no `queryTracking`, so its first
 * sub-agents are at depth 0.
 */
export function createRootToolUseContext(options: RootToolUseContextOptions): ToolUseContext {
  const store = createAppStateStore(options.appState);
  let abortController = options.abortController;
  if (abortController === undefined) {
    abortController = new AbortController();
    const maxListeners = checkMaxListeners(
      options.maxAbortListeners ?? DEFAULT_ABORT_MAX_LISTENERS,
      'createRootToolUseContext: maxAbortListeners',
    );
    setMaxListeners(maxListeners, abortController.signal);
  }
  const context: ToolUseContext = {
    options: { ...options.options, tools: options.tools, model: options.model },
    messages: options.messages ?? [],
    cwd: options.cwd,
    readFileState: options.readFileState ?? createFileStateCache(options.fileStateCacheLimits),
    abortController,
    getAppState: store.getState,
    setAppState: store.setState,
    setAppStateForTasks: store.setState,
  };
  if (options.fileReadingLimits !== undefined)
    context.fileReadingLimits = options.fileReadingLimits;
  if (options.emit !== undefined) context.emit = options.emit;
  return context;
}
