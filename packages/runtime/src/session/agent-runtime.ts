import type Anthropic from '@anthropic-ai/sdk';
import type { AgentDefinition, AgentDefinitionsResult, Tool, ToolUseContext } from '@delegate/core';
import type { ForkLayout } from '@delegate/fork-cache';
import type { AbortHub } from '../lifecycle/abort-hub.js';
import type { ToolCallHooks } from '../query/run-tools.js';
import type { AgentDirectory } from '../lifecycle/agent-directory.js';
import type { AskHandler } from '../permissions.js';
import type { TaskRegistry } from '../tasks/task-registry.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import type { UsageLedger } from '../usage/usage-ledger.js';
import type { EventBus } from './event-bus.js';
import type { CacheDiagnosisEntry } from './session-options.js';

/** Limits and switches of sub-agent spawning. */
export type AgentRuntimeOptions = {
  /** Leaving out `subagent_type` forks the caller (default false). */
  forkEnabled: boolean;
  /** While forking is on, every spawn (fork or named type) runs in the background. */
  forkForceAsync: boolean;
  /** Coordinator mode: every spawn runs in the background. */
  coordinatorMode: boolean;
  /** Background tasks are disabled (spawns run in the foreground). */
  backgroundTasksDisabled: boolean;
  /** List agent types in a `<system-reminder>` message instead of the tool description. */
  agentListInMessages: boolean;
  /** Most background agents running at once. */
  maxBackgroundAgents: number;
  /** Deepest nesting of sub-agents (the main agent's children are depth 0). */
  maxDepth: number;
  /** How long a foreground agent runs before the caller is told it can background it. */
  backgroundHintMs: number;
  /** Longest wait for required MCP servers that are still connecting. */
  mcpWaitMs: number;
  /** Poll interval of that wait. */
  mcpPollMs: number;
  /** Default model of sub-agents (alias or id). */
  defaultSubagentModel: string;
  /** Finished agents kept whole for SendMessage; older ones are compacted to a summary. */
  maxRetainedAgents: number;
  /** Summaries of compacted agents (and finished tasks) kept. */
  maxAgentSummaries: number;
  /** Parent directory of agent worktrees (default: under the OS temp dir). */
  worktreeRoot?: string;
  /** Home directory for user-scope memory. */
  homeDir?: string;
  /** Layout of a fork's copy of the parent's assistant turn. */
  forkLayout: ForkLayout;
  /** Receives the cache diagnosis of every sub-agent request, when debugging is on. */
  debugCacheDiagnosis?: (entry: CacheDiagnosisEntry) => void;
  /** A streaming request with no event for this long is a stall: aborted and retried. */
  streamIdleTimeoutMs: number;
  /** Stalls in a row of one request after which the agent fails. */
  maxConsecutiveStalls: number;
  /** Values removed from every tool result (besides the client's API key and auth token). */
  secrets: readonly string[];
};

/** Everything the Agent, TaskOutput, TaskStop and SendMessage tools share. */
export type AgentRuntime = {
  /** The SDK client every agent of the session uses. */
  client: Anthropic;
  /** The session's id. */
  sessionId: string;
  /** Limits and switches. */
  options: AgentRuntimeOptions;
  /** Tasks of the session. */
  tasks: TaskRegistry;
  /** Usage, cost and budgets of every agent, as a tree under the main agent. */
  usage: UsageLedger;
  /** Lifecycle events. */
  events: EventBus;
  /** Transcript writer, when transcripts are on. */
  transcript?: TranscriptStore;
  /** Base tool pool sub-agents are assembled from (without the agent tools). */
  baseTools: () => Tool[];
  /** The Agent/TaskOutput/TaskStop/SendMessage tools, for pools that include them. */
  agentTools: () => Tool[];
  /** Agent definitions of the session. */
  getAgentDefinitions: () => AgentDefinitionsResult;
  /**
   * Why an agent type is missing when a file meant to define it failed to load (from
   * `@delegate/agent-defs`' `failedAgents`), or undefined when no such file exists.
   */
  explainUnknownAgentType?: (agentType: string) => string | undefined;
  /** Asks the person at the terminal (foreground agents only). */
  ask?: AskHandler;
  /** Spawned agents by id and by name, finished ones compacted past `maxRetainedAgents`. */
  agents: AgentDirectory;
  /** Gates that let sibling forks wait until the first one's response has begun. */
  forkWarmups: Map<string, Promise<void>>;
  /** Handles of foreground agents that can be moved to the background. */
  foreground: Map<string, { background: () => boolean }>;
  /** The fork's synthetic definition. */
  forkAgent: AgentDefinition;
  /** The type a call without `subagent_type` starts when it does not fork (`general-purpose`). */
  defaultAgentType: string;
  /** Built-in types that are never continued (Explore, Plan): no id or usage trailer, no SendMessage. */
  oneShotAgentTypes: ReadonlySet<string>;
  /** Background spawns being set up (counted against `maxBackgroundAgents`). */
  pendingBackgroundSpawns: number;
  /** Runs still settling (flush waits for them). */
  pendingRuns: Set<Promise<unknown>>;
  /** Agents a `resumeAgent` call is restoring from their transcript (not running yet). */
  resumingAgents: Set<string>;
  /** Sub-agents' own MCP servers while a run has them open (`close` stops them all). */
  agentMcpConnections: Set<{ close(): Promise<void> }>;
  /** Background agents start through this, one per event-loop turn (see `createStartGate`). */
  backgroundStart: () => Promise<void>;
  /**
   * Every model request of the session's agents (main, sub-agents, forks) is built and sent
   * through this, one per event-loop turn: when a burst of responses lands at once (hundreds
   * of background agents), their next requests do not all serialize in one stretch.
   */
  requestGate: () => Promise<void>;
  /** The main agent's context (background agents and resumed agents hang off it). */
  rootContext: ToolUseContext;
  /** Background agents' abort controllers, all stopped by the session's abort through one listener. */
  backgroundAbort: AbortHub;
  /** The session's working directory: new worktrees and project memory resolve against it. */
  rootCwd: string;
  /** The main agent's tool-call hooks (`mainAgentHooks`), also run for its forks. */
  mainToolHooks?: ToolCallHooks;
  /** Pulls the current MCP clients and tools into the root state (when the session has a source). */
  refreshMcp?: () => void;
};
