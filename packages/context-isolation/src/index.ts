export { cloneFileStateCache } from './clone-file-state-cache.js';
export { createAppStateStore, createDefaultAppState } from './create-app-state-store.js';
export type { AppStateStore } from './create-app-state-store.js';
export {
  DEFAULT_ABORT_MAX_LISTENERS,
  countLinkedChildren,
  createChildAbortController,
  releaseChildAbortController,
} from './create-child-abort-controller.js';
export type { ChildAbortControllerOptions } from './create-child-abort-controller.js';
export { createFileStateCache } from './create-file-state-cache.js';
export { createRootToolUseContext } from './create-root-tool-use-context.js';
export type { RootToolUseContextOptions } from './create-root-tool-use-context.js';
export { createSubagentContext, releaseSubagentContext } from './create-subagent-context.js';
export { DEFAULT_FILE_STATE_CACHE_LIMITS, LruFileStateCache } from './lru-file-state-cache.js';
export type { FileStateCacheLimits, FileStateCacheOptions } from './lru-file-state-cache.js';
export { normalizeCachePath } from './normalize-cache-path.js';
export type { SubagentContextOverrides } from './subagent-context-overrides.js';
