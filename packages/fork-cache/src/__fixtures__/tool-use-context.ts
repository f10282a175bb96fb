import { type AppState, type FileState, type FileStateCache, type ToolUseContext } from '@delegate/core';

function createFileStateCache(entries: Map<string, FileState> = new Map()): FileStateCache {
  const cache: FileStateCache = {
    get: (path) => entries.get(path),
    set(path, state) {
      entries.set(path, state);
      return cache;
    },
    has: (path) => entries.has(path),
    delete: (path) => entries.delete(path),
    clear: () => entries.clear(),
    clone: () => createFileStateCache(new Map(entries)),
    keys: () => entries.keys(),
    get size() {
      return entries.size;
    },
  };
  return cache;
}

/** A small but complete tool-use context for a main-thread agent. */
export function createToolUseContext(): ToolUseContext {
  let appState: AppState = {
    toolPermissionContext: {
      mode: 'default',
      allowRules: [],
      denyRules: [],
      askRules: [],
      additionalWorkingDirectories: [],
    },
    tasks: {},
    mcp: { clients: [], tools: [] },
  };
  return {
    options: { tools: [], model: 'claude-sonnet-4-5', thinking: { type: 'enabled', budgetTokens: 8000 } },
    messages: [],
    cwd: '/repo',
    readFileState: createFileStateCache(),
    abortController: new AbortController(),
    getAppState: () => appState,
    setAppState: (update) => {
      appState = update(appState);
    },
  };
}
