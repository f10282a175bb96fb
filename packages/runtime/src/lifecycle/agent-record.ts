import {
  type AgentDefinitionsResult,
  type CanUseTool,
  type PermissionMode,
  type Tool,
  type ToolUseContext,
  DelegateError,
  PermissionMode as PermissionModeSchema,
} from '@delegate/core';
import { z } from 'zod';
import { createChildAbortController, createSubagentContext } from '@delegate/context-isolation';
import type { AgentRecord, AgentRuntime } from '../session/agent-runtime.js';
import type { ApiEffort, ApiToolDefinition } from '../query/build-messages-request.js';
import { createCanUseTool } from '../permissions.js';
import type { AgentWorktree } from '../worktree/worktree.js';

/** Everything that defines a sub-agent's runs, as stored in its transcript metadata. */
export type AgentSpec = {
  agentId: string;
  agentType: string;
  description: string;
  name?: string;
  isFork: boolean;
  isBuiltIn: boolean;
  model: string;
  systemPrompt: string[];
  userContext?: Record<string, string>;
  systemContext?: Record<string, string>;
  toolDefinitions?: ApiToolDefinition[];
  cwd: string;
  querySource: string;
  permissionMode: PermissionMode;
  maxTurns?: number;
  effort?: ApiEffort;
  parentAgentId?: string;
  /** Thinking budget in tokens, from a numeric `effort` in the definition. */
  thinkingBudget?: number;
  /** Runs in a git worktree (recreated when a finished agent whose worktree was removed is continued). */
  isolation?: 'worktree';
};

const AgentSpecSchema = z.object({
  agentId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/),
  agentType: z.string().min(1),
  description: z.string(),
  name: z.string().optional(),
  isFork: z.boolean(),
  isBuiltIn: z.boolean(),
  model: z.string().min(1),
  systemPrompt: z.array(z.string()),
  userContext: z.record(z.string(), z.string()).optional(),
  systemContext: z.record(z.string(), z.string()).optional(),
  toolDefinitions: z
    .array(
      z.object({
        name: z.string(),
        description: z.string(),
        input_schema: z.record(z.string(), z.unknown()),
      }),
    )
    .optional(),
  cwd: z.string().min(1),
  querySource: z.string(),
  permissionMode: PermissionModeSchema,
  maxTurns: z.number().int().positive().optional(),
  effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional(),
  parentAgentId: z.string().optional(),
  isolation: z.literal('worktree').optional(),
  thinkingBudget: z.number().int().positive().optional(),
});

/** Validates agent metadata read from a transcript folder. */
export function parseAgentSpec(value: unknown, where: string): AgentSpec {
  const parsed = AgentSpecSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${where}: not valid agent metadata (${issue?.path.join('.') || 'value'}: ${issue?.message ?? 'invalid'}).`,
    );
  }
  return parsed.data as AgentSpec;
}

/**
 * Creates an agent's record and its isolated context under `parent`: its own tools,
 * model and cwd, the agent's permission mode, and no permission prompts while it runs
 * in the background (a foreground agent asks through the runtime's handler, a `bubble`
 * agent through its parent's check).
 */
export function createAgentRecord(options: {
  runtime: AgentRuntime;
  parent: ToolUseContext;
  spec: AgentSpec;
  tools: Tool[];
  definitions: AgentDefinitionsResult;
  isBackground: boolean;
  parentCanUseTool?: CanUseTool;
  worktree?: AgentWorktree;
}): AgentRecord {
  const { runtime, parent, spec } = options;
  const record: AgentRecord = {
    agentId: spec.agentId,
    agentType: spec.agentType,
    description: spec.description,
    isFork: spec.isFork,
    isBuiltIn: spec.isBuiltIn,
    systemPrompt: spec.systemPrompt,
    model: spec.model,
    context: parent,
    canUseTool: options.parentCanUseTool ?? createCanUseTool(),
    messages: [],
    inbox: [],
    status: 'running',
    isBackground: options.isBackground,
    querySource: spec.querySource,
    ...(spec.name ? { name: spec.name } : {}),
    ...(spec.userContext ? { userContext: spec.userContext } : {}),
    ...(spec.systemContext ? { systemContext: spec.systemContext } : {}),
    ...(spec.toolDefinitions ? { toolDefinitions: spec.toolDefinitions } : {}),
    ...(spec.effort ? { effort: spec.effort } : {}),
    ...(spec.maxTurns !== undefined ? { maxTurns: spec.maxTurns } : {}),
    ...(options.worktree ? { worktree: options.worktree } : {}),
    ...(spec.parentAgentId ? { parentAgentId: spec.parentAgentId } : {}),
    ...(spec.isolation ? { isolation: spec.isolation } : {}),
  };
  record.context = createSubagentContext(parent, {
    // A background agent outlives the turn that started it: it stops with the session
    // (or TaskStop), not with its caller, which may finish long before it does.
    ...(options.isBackground
      ? { abortController: createChildAbortController(runtime.rootAbortController) }
      : {}),
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
    getAppState: () => {
      const state = parent.getAppState();
      return {
        ...state,
        toolPermissionContext: {
          ...state.toolPermissionContext,
          mode: spec.permissionMode,
          shouldAvoidPermissionPrompts:
            record.isBackground ||
            state.toolPermissionContext.shouldAvoidPermissionPrompts === true,
        },
      };
    },
  });
  const ask = runtime.ask;
  record.canUseTool = createCanUseTool({
    ...(ask
      ? {
          ask: async (request) =>
            record.isBackground
              ? { behavior: 'deny', message: 'A background agent cannot ask for approval.' }
              : ask(request),
        }
      : {}),
    // `bubble` asks the parent's question: judged by the parent's own mode and rules.
    ...(options.parentCanUseTool
      ? {
          parentCanUseTool: (tool, input, _context, assistantMessage, toolUseId) =>
            options.parentCanUseTool!(tool, input, parent, assistantMessage, toolUseId),
        }
      : {}),
  });
  runtime.agents.set(spec.agentId, record);
  if (spec.name) runtime.agents.set(spec.name, record);
  runtime.transcript?.setParent(spec.agentId, parent.agentId);
  void runtime.transcript?.writeAgentMeta(spec.agentId, spec);
  return record;
}
