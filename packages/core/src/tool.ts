import type { z } from 'zod';
import type { TextBlock } from './content.js';
import type { AssistantMessage, Message } from './message.js';
import type { PermissionDecision } from './permission.js';
import type { ToolUseContext } from './tool-use-context.js';

/** What a tool call returns to the loop. */
export type ToolResult<Output = unknown> = {
  /** Text the model sees as the `tool_result` content. */
  content: string | TextBlock[];
  /** True when the call failed; the model sees the content as an error. */
  isError?: boolean;
  /** Structured output for callers (not sent to the model). */
  data?: Output;
  /** Messages to append to the conversation after the tool result. */
  newMessages?: Message[];
};

/** Extra facts a tool gets about the call it is serving. */
export type ToolCallExtras = {
  /** Id of the `tool_use` block being answered. */
  toolUseId: string;
  /** The assistant message that holds the call. */
  assistantMessage?: AssistantMessage;
  /** The permission check of the calling agent, for tools that spawn work. */
  canUseTool?: CanUseTool;
  /** Reports progress of a long call. */
  onProgress?: (data: unknown) => void;
};

/** Decides whether a tool call may run; `ask` is turned into a question by the caller. */
export type CanUseTool = (
  tool: Tool,
  input: unknown,
  context: ToolUseContext,
  assistantMessage?: AssistantMessage,
  toolUseId?: string,
) => Promise<PermissionDecision>;

/**
 * A tool an agent can call. The input schema is a zod schema (converted to JSON Schema
 * for the API unless `inputJSONSchema` is given, as MCP tools do).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a tool list holds tools of different input types
export interface Tool<Input = any, Output = unknown> {
  /** Name the model calls the tool by. */
  readonly name: string;
  /** Other names that refer to the same tool (legacy names). */
  readonly aliases?: readonly string[];
  /** Description sent to the model. */
  description(context?: ToolUseContext): string | Promise<string>;
  /** Schema of the input; parsed before `call`. */
  readonly inputSchema: z.ZodType<Input>;
  /** JSON Schema to send instead of converting `inputSchema` (MCP tools). */
  readonly inputJSONSchema?: Record<string, unknown>;
  /** Runs the tool. */
  call(input: Input, context: ToolUseContext, extras: ToolCallExtras): Promise<ToolResult<Output>>;
  /** True when the call changes nothing outside the agent. */
  isReadOnly(input?: Input): boolean;
  /** True when the call may run in parallel with other concurrency-safe calls. */
  isConcurrencySafe(input?: Input): boolean;
  /**
   * Longest a call may run, in milliseconds: past it the call is aborted and the agent gets
   * an error result saying so (the agent itself goes on). Unset means no limit.
   */
  readonly timeoutMs?: number;
  /** True for tools bridged from an MCP server (`mcp__server__tool`). */
  readonly isMcp?: boolean;
  /** True when the tool needs a person to answer (never given to background agents). */
  requiresUserInteraction?(): boolean;
  /** Tool-specific permission check, run before the caller's `canUseTool`. */
  checkPermissions?(input: Input, context: ToolUseContext): Promise<PermissionDecision>;
}

/** True when the tool is called `name`, directly or through one of its aliases. */
export function toolMatchesName(tool: Pick<Tool, 'name' | 'aliases'>, name: string): boolean {
  return tool.name === name || (tool.aliases?.includes(name) ?? false);
}

/** Finds a tool by name or alias. */
export function findToolByName<T extends Pick<Tool, 'name' | 'aliases'>>(
  tools: readonly T[],
  name: string,
): T | undefined {
  return tools.find((tool) => toolMatchesName(tool, name));
}

/**
 * What a tool name may be: a letter, then letters, digits, `_` and `-` (MCP tools:
 * `mcp__server__tool`). Permission rules take these and also `mcp__server__*` (see
 * `PERMISSION_RULE_TOOL_NAME_PATTERN`).
 */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** Names of the built-in tools, shared so packages agree on spelling. */
export const TOOL_NAMES = {
  agent: 'Agent',
  agentLegacy: 'Task',
  read: 'Read',
  write: 'Write',
  edit: 'Edit',
  notebookEdit: 'NotebookEdit',
  glob: 'Glob',
  grep: 'Grep',
  bash: 'Bash',
  webFetch: 'WebFetch',
  webSearch: 'WebSearch',
  todoWrite: 'TodoWrite',
  taskOutput: 'TaskOutput',
  taskStop: 'TaskStop',
  exitPlanMode: 'ExitPlanMode',
  askUserQuestion: 'AskUserQuestion',
  sendMessage: 'SendMessage',
  taskCreate: 'TaskCreate',
  taskGet: 'TaskGet',
  taskList: 'TaskList',
  taskUpdate: 'TaskUpdate',
  skill: 'Skill',
} as const;
