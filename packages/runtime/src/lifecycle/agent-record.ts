import {
  type AgentColor,
  type AgentDefinitionsResult,
  type AppState,
  type CanUseTool,
  type CompleteUsage,
  type Message,
  type Tool,
  type ToolUseContext,
  type UserMessage,
  emptyUsage,
} from '@delegate/core';
import { createChildAbortController, createSubagentContext } from '@delegate/context-isolation';
import type { McpServerConfig } from '@delegate/tools';
import { createCanUseTool } from '../permissions.js';
import type { ApiEffort, ApiToolDefinition } from '../query/build-messages-request.js';
import type { ToolCallHooks } from '../query/run-tools.js';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { withAskRules } from '../session/ask-rules.js';
import type { AgentWorktree } from '../worktree/worktree.js';
import type { AgentSpec } from './agent-spec.js';

/** Where a record stands; `idle` is a finished run that SendMessage may continue. */
export type AgentRecordStatus = 'running' | 'idle' | 'failed' | 'killed';

/**
 * A spawned agent that SendMessage can continue. Its state (the readonly fields below
 * `context`) changes only through the named transitions of `record-transitions.ts`.
 */
export type AgentRecord = {
  /** Agent id. */
  readonly agentId: string;
  /** Name to address it with SendMessage. */
  readonly name?: string;
  /** Agent type (`fork` for forks). */
  readonly agentType: string;
  /** Short description from the Agent tool call. */
  readonly description: string;
  /** True for a fork of its caller. */
  readonly isFork: boolean;
  /** True for a built-in agent type. */
  readonly isBuiltIn: boolean;
  /** System prompt blocks sent on every request. */
  readonly systemPrompt: string[];
  /** User context of its requests. */
  readonly userContext?: Record<string, string>;
  /** System context of its requests. */
  readonly systemContext?: Record<string, string>;
  /** Exact tool definitions (forks reuse the parent's). */
  readonly toolDefinitions?: ApiToolDefinition[];
  /** Model id. */
  readonly model: string;
  /** Reasoning effort. */
  readonly effort?: ApiEffort;
  /** Turn limit of one run. */
  readonly maxTurns?: number;
  /** Query source of its requests. */
  readonly querySource: string;
  /** The agent that spawned it. */
  readonly parentAgentId?: string;
  /** Set when the agent runs in a worktree, kept after a removed worktree for continuations. */
  readonly isolation?: 'worktree';
  /** Display color from its definition. */
  readonly color?: AgentColor;
  /** Permission check of its tool calls. */
  readonly canUseTool: CanUseTool;
  /** PreToolUse/PostToolUse hooks from its definition. */
  readonly toolHooks?: ToolCallHooks;
  /** MCP servers its definition defines inline: started for each run, stopped when it ends. */
  readonly mcpServers?: Readonly<Record<string, McpServerConfig>>;
  /** Its definition's `disallowedTools`, which leave out tools of those servers too. */
  readonly mcpDisallowedTools?: readonly string[];
  /** The agent's context (tools, cwd, abort signal). */
  readonly context: ToolUseContext;
  /** Conversation so far. */
  readonly messages: readonly Message[];
  /** Messages sent while it runs, delivered at its next turn. */
  readonly inbox: readonly UserMessage[];
  /** Where it stands. */
  readonly status: AgentRecordStatus;
  /** True once it runs (or ran) in the background. */
  readonly isBackground: boolean;
  /** Task tracking the current (or last) run. */
  readonly taskId?: string;
  /** Its worktree, while it has one. */
  readonly worktree?: AgentWorktree;
  /**
   * What its transcript metadata records: its spec, with the worktree it works in (or last
   * worked in, after that one was removed), so a continuation or a resume makes a fresh one
   * from the same repository and folder.
   */
  readonly spec: AgentSpec;
  /** Usage summed over every response it kept, over all its runs (retried attempts never count). */
  readonly usage: CompleteUsage;
  /** Cost of `usage` in US dollars, from the session's price table. */
  readonly costUsd: number;
};

/** What {@link createAgentRecord} needs besides the spec. */
export type CreateAgentRecordOptions = {
  /** The session's shared state. */
  runtime: AgentRuntime;
  /** The calling agent's context. */
  parent: ToolUseContext;
  /** Everything that defines the agent's runs. */
  spec: AgentSpec;
  /** Its tool pool. */
  tools: Tool[];
  /** Definitions it may spawn from. */
  definitions: AgentDefinitionsResult;
  /** True when it starts in the background. */
  isBackground: boolean;
  /** The caller's permission check (a fork's `bubble` questions go to it). */
  parentCanUseTool?: CanUseTool;
  /** Its worktree, when it runs in one. */
  worktree?: AgentWorktree;
  /** Its memory folder: the one directory besides its cwd its file tools may reach. */
  memoryDirectory?: string;
  /** Wraps its permission check (memory writes without approval). */
  wrapCanUseTool?: (canUseTool: CanUseTool) => CanUseTool;
  /** Hooks around its tool calls. */
  toolHooks?: ToolCallHooks;
  /** MCP servers of its own, started for each run. */
  mcpServers?: Readonly<Record<string, McpServerConfig>>;
  /** Tools of those servers it may not have (its definition's `disallowedTools`). */
  mcpDisallowedTools?: readonly string[];
  /** Display color. */
  color?: AgentColor;
};

type MutableRecord = { -readonly [Key in keyof AgentRecord]: AgentRecord[Key] };

/**
 * The agent's view of the app state: its own permission mode, no prompts while it runs in
 * the background or under a `dontAsk` parent, and its allowed directories (a fork keeps its caller's; any other agent
 * gets only its memory folder beyond its cwd).
 */
function agentAppState(options: {
  state: AppState;
  record: AgentRecord;
  spec: AgentSpec;
  memoryDirectory: string | undefined;
}): AppState {
  const { state, record, spec, memoryDirectory } = options;
  const permission = state.toolPermissionContext;
  return {
    ...state,
    toolPermissionContext: {
      ...permission,
      mode: spec.permissionMode,
      additionalWorkingDirectories: spec.isFork
        ? permission.additionalWorkingDirectories
        : memoryDirectory
          ? [memoryDirectory]
          : [],
      // Nobody is asked for a background agent, nor under a parent whose person chose
      // not to be asked (dontAsk): there a question becomes a denial.
      shouldAvoidPermissionPrompts:
        record.isBackground ||
        permission.mode === 'dontAsk' ||
        permission.shouldAvoidPermissionPrompts === true,
    },
  };
}

function agentContext(options: CreateAgentRecordOptions, record: AgentRecord): ToolUseContext {
  const { runtime, parent, spec } = options;
  return createSubagentContext(parent, {
    // A background agent outlives the turn that started it: it stops with the session
    // (or TaskStop), not with its caller, which may finish long before it does.
    ...(options.isBackground ? { abortController: runtime.backgroundAbort.createChild() } : {}),
    options: {
      ...parent.options,
      tools: options.tools,
      model: spec.model,
      querySource: spec.querySource,
      agentDefinitions: options.definitions,
      // Forks keep the parent's thinking configuration: it is part of the cache key.
      ...(spec.isFork
        ? {}
        : {
            thinking: spec.thinkingBudget
              ? { type: 'enabled' as const, budgetTokens: spec.thinkingBudget }
              : undefined,
          }),
    },
    agentId: spec.agentId,
    agentType: spec.agentType,
    messages: [],
    cwd: spec.cwd,
    getAppState: () =>
      agentAppState({
        state: parent.getAppState(),
        record,
        spec,
        memoryDirectory: options.memoryDirectory,
      }),
  });
}

// The parent's context as a check for a background agent sees it: nobody may be asked.
function withoutPrompts(parent: ToolUseContext): ToolUseContext {
  return {
    ...parent,
    getAppState: () => {
      const state = parent.getAppState();
      return {
        ...state,
        toolPermissionContext: {
          ...state.toolPermissionContext,
          shouldAvoidPermissionPrompts: true,
        },
      };
    },
  };
}

/**
 * The agent's permission check: questions go to the runtime's handler while it runs in the
 * foreground and become denials in the background; a `bubble` agent asks its parent's
 * check, judged by the parent's own mode and rules (in the background, without asking anyone). A tool that needs a person to answer
 * (`requiresUserInteraction`) is refused while the agent runs in the background.
 */
function agentCanUseTool(options: CreateAgentRecordOptions, record: AgentRecord): CanUseTool {
  const { runtime, parent } = options;
  const ask = runtime.ask;
  const parentCanUseTool = options.parentCanUseTool;
  const base = createCanUseTool({
    ...(ask
      ? {
          ask: async (request) =>
            record.isBackground
              ? { behavior: 'deny', message: 'A background agent cannot ask for approval.' }
              : ask(request),
        }
      : {}),
    ...(parentCanUseTool
      ? {
          // A background agent's question is judged by the parent's mode and rules, but
          // never put to a person: what would need one is denied.
          parentCanUseTool: (tool, input, _context, assistantMessage, toolUseId) =>
            parentCanUseTool(
              tool,
              input,
              record.isBackground ? withoutPrompts(parent) : parent,
              assistantMessage,
              toolUseId,
            ),
        }
      : {}),
  });
  const withRules = withAskRules(base, ask ? { ask } : {});
  const check = options.wrapCanUseTool ? options.wrapCanUseTool(withRules) : withRules;
  // A fork keeps its parent's tools (the prompt cache needs them unchanged), and a
  // foreground agent moved to the background keeps the ones it had: so the refusal is made
  // here, on every call, while the agent is in the background, whatever its tool list says.
  return async (tool, input, context, assistantMessage, toolUseId) => {
    if (record.isBackground && tool.requiresUserInteraction?.() === true) {
      return {
        behavior: 'deny',
        message: `${tool.name} needs a person to answer, and this agent runs in the background, where nobody can. Go on without asking, or end with a report that says what you would have asked.`,
      };
    }
    return check(tool, input, context, assistantMessage, toolUseId);
  };
}

/** The record's own MCP servers and the tools of theirs it may not have, when it has servers. */
function ownMcpFields(
  options: CreateAgentRecordOptions,
): Pick<AgentRecord, 'mcpServers' | 'mcpDisallowedTools'> {
  if (!options.mcpServers) return {};
  return {
    mcpServers: options.mcpServers,
    ...(options.mcpDisallowedTools?.length
      ? { mcpDisallowedTools: options.mcpDisallowedTools }
      : {}),
  };
}

/**
 * Creates an agent's record and its isolated context under `parent`: its own tools,
 * model and cwd, the agent's permission mode, and no permission prompts while it runs
 * in the background. The record is registered with the runtime (by id and name) and its
 * metadata written next to its transcript.
 */
export function createAgentRecord(options: CreateAgentRecordOptions): AgentRecord {
  const { runtime, parent } = options;
  const spec: AgentSpec = options.worktree
    ? { ...options.spec, worktree: options.worktree }
    : options.spec;
  const record: MutableRecord = {
    agentId: spec.agentId,
    agentType: spec.agentType,
    description: spec.description,
    isFork: spec.isFork,
    isBuiltIn: spec.isBuiltIn,
    systemPrompt: spec.systemPrompt,
    model: spec.model,
    querySource: spec.querySource,
    context: parent,
    canUseTool: createCanUseTool(),
    messages: [],
    inbox: [],
    status: 'running',
    isBackground: options.isBackground,
    usage: emptyUsage(),
    costUsd: 0,
    spec,
    ...(spec.name ? { name: spec.name } : {}),
    ...(spec.userContext ? { userContext: spec.userContext } : {}),
    ...(spec.systemContext ? { systemContext: spec.systemContext } : {}),
    ...(spec.toolDefinitions ? { toolDefinitions: spec.toolDefinitions } : {}),
    ...(spec.effort ? { effort: spec.effort } : {}),
    ...(spec.maxTurns !== undefined ? { maxTurns: spec.maxTurns } : {}),
    ...(options.worktree ? { worktree: options.worktree } : {}),
    ...(spec.parentAgentId ? { parentAgentId: spec.parentAgentId } : {}),
    ...(spec.isolation ? { isolation: spec.isolation } : {}),
    ...(options.color ? { color: options.color } : {}),
    ...(options.toolHooks ? { toolHooks: options.toolHooks } : {}),
    ...ownMcpFields(options),
  };
  record.context = agentContext(options, record);
  record.canUseTool = agentCanUseTool(options, record);
  runtime.agents.add(record);
  runtime.usage.register({
    agentId: spec.agentId,
    ...(spec.parentAgentId ? { parentAgentId: spec.parentAgentId } : {}),
    agentType: spec.agentType,
    description: spec.description,
    model: spec.model,
    budget: {
      ...(spec.maxTokens !== undefined ? { maxTokens: spec.maxTokens } : {}),
      ...(spec.maxCostUsd !== undefined ? { maxCostUsd: spec.maxCostUsd } : {}),
    },
  });
  runtime.transcript?.setParent(spec.agentId, parent.agentId);
  void runtime.transcript?.writeAgentMeta(spec.agentId, spec);
  return record;
}

/** A controller for a continuation: linked to the session when it runs in the background, else to its caller. */
export function continuationController(options: {
  runtime: AgentRuntime;
  isBackground: boolean;
  parentController: AbortController;
}): AbortController {
  return options.isBackground
    ? options.runtime.backgroundAbort.createChild()
    : createChildAbortController(options.parentController);
}
