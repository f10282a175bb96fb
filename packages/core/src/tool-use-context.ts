import type { AgentDefinitionsResult } from './agent-definition.js';
import type { Message } from './message.js';
import type { ToolPermissionContext } from './permission.js';
import type { Tool } from './tool.js';
import type { CompleteUsage } from './usage.js';
import type { AgentEvent } from './events.js';

/** What the file-read cache remembers about one file. */
export type FileState = {
  /** Content as last read (or the slice that was read). */
  content: string;
  /** Modification time (ms since epoch) when it was read. */
  timestamp: number;
  /** SHA-256 of the whole file when it was read. */
  contentHash?: string;
  /** First line read, 1-based, for partial reads. */
  offset?: number;
  /** Number of lines read, for partial reads. */
  limit?: number;
  /** True when only part of the file was read. */
  isPartialView?: boolean;
};

/** The file-read cache tools consult to detect stale writes; clones are independent. */
export interface FileStateCache {
  get(path: string): FileState | undefined;
  set(path: string, state: FileState): this;
  has(path: string): boolean;
  delete(path: string): boolean;
  clear(): void;
  /** Returns an independent copy. */
  clone(): FileStateCache;
  keys(): IterableIterator<string>;
  readonly size: number;
}

/** Status of a background or foreground task. */
export type TaskStatus = 'running' | 'completed' | 'failed' | 'killed';

/** A task registered at the root so no background work is ever orphaned. */
export type TaskState = {
  /** Task id (`t…`). */
  id: string;
  /** What kind of work it is. */
  type: 'local_agent' | 'local_bash' | 'remote_agent';
  /** Short description given when it started. */
  description: string;
  /** Current status. */
  status: TaskStatus;
  /** Start time, ms since epoch. */
  startTime: number;
  /** End time, ms since epoch, once finished. */
  endTime?: number;
  /** Agent id, for agent tasks. */
  agentId?: string;
  /** Agent type, for agent tasks. */
  agentType?: string;
  /** Token usage so far. */
  usage?: CompleteUsage;
  /** Cost of that usage in US dollars, for agent tasks. */
  costUsd?: number;
  /** Number of tool calls so far. */
  toolUseCount?: number;
  /** Last thing the task did, for progress displays. */
  lastActivity?: string;
  /** Final result text, once completed. */
  result?: string;
  /** Failure message, once failed. */
  error?: string;
  /** True while the task runs in the background. */
  isBackgrounded?: boolean;
  /** Stops the task. */
  kill?: () => void;
  /**
   * The `<task-notification>` of a finished background task: `queued` for its parent's next
   * turn, `delivered` once a request carried it, `undeliverable` when its parent was gone
   * (the text stays here so nothing is lost).
   */
  notification?: { status: 'queued' | 'delivered' | 'undeliverable'; text: string };
};

/** Connection state of one MCP server. */
export type McpClientState = {
  /** Server name as configured. */
  name: string;
  /** Where the connection stands. */
  type: 'pending' | 'connected' | 'failed';
  /** Failure reason, for failed servers. */
  error?: string;
};

/** Application state shared along an agent tree (read through `getAppState`). */
export type AppState = {
  /** Permission mode and rules. */
  toolPermissionContext: ToolPermissionContext;
  /** Tasks by id, always registered at the root. */
  tasks: Record<string, TaskState>;
  /** MCP servers and the tools they expose. */
  mcp: { clients: McpClientState[]; tools: Tool[] };
  /** Other state a host keeps (UI flags, settings). */
  [key: string]: unknown;
};

/** Replaces application state from the previous value. */
export type SetAppState = (update: (previous: AppState) => AppState) => void;

/** Extended-thinking configuration of a request (part of the cache key). */
export type ThinkingConfig =
  { type: 'disabled' } | { type: 'enabled'; budgetTokens: number } | { type: 'adaptive' };

/** Options of the agent a context belongs to. */
export type ToolUseOptions = {
  /** Tools the agent has. */
  tools: Tool[];
  /** Model id the agent runs on. */
  model: string;
  /** Agent definitions visible to the agent. */
  agentDefinitions?: AgentDefinitionsResult;
  /** Where the query comes from (`repl_main_thread`, `agent:builtin:fork`, …). */
  querySource?: string;
  /** Thinking configuration inherited by forks. */
  thinking?: ThinkingConfig;
  /** True when no person is present to answer questions. */
  isNonInteractive?: boolean;
  /** Anything else a host passes down. */
  [key: string]: unknown;
};

/** Tracks one chain of queries: forks and sub-agents start a new chain one level deeper. */
export type QueryTracking = { chainId: string; depth: number };

/**
 * Everything a tool call or a query loop can reach. Sub-agents get an isolated copy
 * from `createSubagentContext`.
 */
export type ToolUseContext = {
  /** The agent's options (tools, model, definitions). */
  options: ToolUseOptions;
  /** The conversation so far. */
  messages: Message[];
  /** Working directory of the agent. */
  cwd: string;
  /** File-read cache used for staleness checks. */
  readFileState: FileStateCache;
  /** Aborts the agent's work. */
  abortController: AbortController;
  /**
   * Aborts when the agent itself stops, not merely the query loop or tool call at hand: work
   * a tool leaves running after its call returns (a background shell) stops with this one.
   * Absent: `abortController.signal` is that signal too. A query loop sets it on the context
   * it hands its tools, whose own controller stops with the loop.
   */
  lifetimeSignal?: AbortSignal;
  /** Reads application state. */
  getAppState: () => AppState;
  /** Changes application state (a no-op in isolated sub-agents). */
  setAppState: SetAppState;
  /** Changes task state at the root, always. */
  setAppStateForTasks?: SetAppState;
  /** Id of the agent; absent on the main thread. */
  agentId?: string;
  /** Type of the agent; absent on the main thread. */
  agentType?: string;
  /** Query chain tracking. */
  queryTracking?: QueryTracking;
  /** Limits on file reads. */
  fileReadingLimits?: { maxBytes?: number; maxLines?: number };
  /** Receives lifecycle events. */
  emit?: (event: AgentEvent) => void;
};
