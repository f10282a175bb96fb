import type { AppState, FileStateCache, Message, ToolUseOptions } from '@delegate/core';

/**
 * What a caller may set or share when deriving a sub-agent context. Everything left
 * out is isolated: the child gets its own copy or a no-op.
 */
export type SubagentContextOverrides = {
  /** Options of the child (its tools, model, definitions); default the parent's. */
  options?: ToolUseOptions;
  /** Id of the child, for agents that already have one; default a new `createAgentId()`. */
  agentId?: string;
  /** Type of the child (such as `Explore`); default none. */
  agentType?: string;
  /** Initial conversation of the child; default the parent's messages. */
  messages?: Message[];
  /** Working directory of the child (a worktree, say); default the parent's. */
  cwd?: string;
  /**
   * File-read cache to clone instead of the parent's (pass an empty cache for a child
   * that must read everything afresh). It is cloned, never shared.
   */
  readFileState?: FileStateCache;
  /** Abort controller of the child; wins over `shareAbortController`. */
  abortController?: AbortController;
  /** Reads application state for the child; replaces the parent's getter and the permission-prompt marking. */
  getAppState?: () => AppState;
  /**
   * Share the parent's `setAppState`, so the child's state changes reach the parent.
   * @defaultValue false (state changes are a no-op)
   */
  shareSetAppState?: boolean;
  /**
   * Use the parent's abort controller itself (an interactive child that stops with its
   * parent and may stop it) and the parent's `getAppState` unchanged.
   * @defaultValue false (a child controller linked to the parent's)
   */
  shareAbortController?: boolean;
};
