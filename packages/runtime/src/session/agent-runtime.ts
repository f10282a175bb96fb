import type Anthropic from '@anthropic-ai/sdk';
import type {
  AgentDefinition,
  AgentDefinitionsResult,
  CanUseTool,
  Message,
  Tool,
  ToolUseContext,
  UserMessage,
} from '@delegate/core';
import type { ApiEffort, ApiToolDefinition } from '../query/build-messages-request.js';
import type { EventBus } from './event-bus.js';
import type { AskHandler } from '../permissions.js';
import type { TaskRegistry } from '../tasks/task-registry.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import type { AgentWorktree } from '../worktree/worktree.js';

/** Limits and switches of sub-agent spawning. */
export type AgentRuntimeOptions = {
  /** Leaving out `subagent_type` forks the caller (default false). */
  forkEnabled: boolean;
  /** Every spawn runs in the background while forking is on (the fork experiment's mode). */
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
  /** Parent directory of agent worktrees (default: under the OS temp dir). */
  worktreeRoot?: string;
  /** Home directory for user-scope memory. */
  homeDir?: string;
};

/** A spawned agent that SendMessage can continue. */
export type AgentRecord = {
  agentId: string;
  name?: string;
  agentType: string;
  description: string;
  isFork: boolean;
  isBuiltIn: boolean;
  /** System prompt blocks sent on every request. */
  systemPrompt: string[];
  userContext?: Record<string, string>;
  systemContext?: Record<string, string>;
  /** Exact tool definitions (forks reuse the parent's). */
  toolDefinitions?: ApiToolDefinition[];
  model: string;
  effort?: ApiEffort;
  maxTurns?: number;
  /** The agent's context (tools, cwd, abort signal). */
  context: ToolUseContext;
  canUseTool: CanUseTool;
  /** Conversation so far. */
  messages: Message[];
  /** Messages sent while it runs, delivered at its next turn. */
  inbox: UserMessage[];
  status: 'running' | 'idle' | 'failed' | 'killed';
  /** True once it runs (or ran) in the background. */
  isBackground: boolean;
  /** Task tracking the current run. */
  taskId?: string;
  worktree?: AgentWorktree;
  /** Set when the agent runs in a worktree, kept after a removed worktree for continuations. */
  isolation?: 'worktree';
  parentAgentId?: string;
  querySource: string;
};

/** Everything the Agent, TaskOutput, TaskStop and SendMessage tools share. */
export type AgentRuntime = {
  client: Anthropic;
  options: AgentRuntimeOptions;
  tasks: TaskRegistry;
  events: EventBus;
  transcript?: TranscriptStore;
  /** Base tool pool sub-agents are assembled from (without the agent tools). */
  baseTools: () => Tool[];
  /** The Agent/TaskOutput/TaskStop/SendMessage tools, for pools that include them. */
  agentTools: () => Tool[];
  /** Agent definitions of the session. */
  getAgentDefinitions: () => AgentDefinitionsResult;
  /** Asks the person at the terminal (foreground agents only). */
  ask?: AskHandler;
  /** Agents by id and by name. */
  agents: Map<string, AgentRecord>;
  /** Gates that let sibling forks wait until the first one's response has begun. */
  forkWarmups: Map<string, Promise<void>>;
  /** Handles of foreground agents that can be moved to the background. */
  foreground: Map<string, { background: () => boolean }>;
  /** Custom agent definition lookup (the fork definition). */
  forkAgent: AgentDefinition;
  /** Background spawns being set up (counted against `maxBackgroundAgents`). */
  pendingBackgroundSpawns: number;
  /** Runs still settling (flush waits for them). */
  pendingRuns: Set<Promise<unknown>>;
  /** The session's abort controller: background agents link to it, not to the caller. */
  rootAbortController: AbortController;
  /** The session's working directory (new worktrees are made from its repository). */
  rootCwd: string;
  /** Pulls the current MCP clients and tools into the root state (when the session has a source). */
  refreshMcp?: () => void;
};
