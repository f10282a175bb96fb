import { z } from 'zod';
import { PermissionMode } from './permission.js';

/** Where an agent definition came from, lowest precedence first. */
export const AgentSource = z.enum([
  'built-in',
  'plugin',
  'userSettings',
  'projectSettings',
  'flagSettings',
  'policySettings',
]);
export type AgentSource = z.infer<typeof AgentSource>;

/** Sources in precedence order: a later one overrides an earlier one of the same type. */
export const AGENT_SOURCE_PRECEDENCE: readonly AgentSource[] = AgentSource.options;

/** Colors an agent may be shown in. */
export const AgentColor = z.enum([
  'red',
  'blue',
  'green',
  'yellow',
  'purple',
  'orange',
  'pink',
  'cyan',
]);
export type AgentColor = z.infer<typeof AgentColor>;

/** Where an agent keeps its persistent memory. */
export const AgentMemoryScope = z.enum(['user', 'project', 'local']);
export type AgentMemoryScope = z.infer<typeof AgentMemoryScope>;

/** Reasoning effort: a named level (Claude Code's five) or a thinking-token budget. */
export const AgentEffort = z.union([
  z.enum(['low', 'medium', 'high', 'xhigh', 'max']),
  z.number().int().positive(),
]);
export type AgentEffort = z.infer<typeof AgentEffort>;

/** Arguments a definition's system prompt may use. */
export type SystemPromptParams = {
  /** Working directory of the agent. */
  cwd?: string;
};

/** What an agent definition says about one sub-agent type. */
export const AgentDefinition = z.object({
  /** The type name the Agent tool's `subagent_type` selects. */
  agentType: z.string().min(1),
  /** When the main agent should use this agent (shown in the Agent tool's prompt). */
  whenToUse: z.string(),
  /** Allowed tools; `undefined` or `['*']` means every tool left after the gates. */
  tools: z.array(z.string()).optional(),
  /** Tools removed before `tools` is applied. */
  disallowedTools: z.array(z.string()).optional(),
  /** Model alias (`sonnet`, `opus`, `haiku`), full model id, or `inherit`. */
  model: z.string().optional(),
  /** Reasoning effort. */
  effort: AgentEffort.optional(),
  /**
   * Permission mode the agent runs with. Unset means `acceptEdits`. A parent in
   * `bypassPermissions` or `plan` gives its sub-agents its own mode whatever this says, and
   * a parent in `dontAsk` turns a mode that would ask (`default`, `bubble`) into `dontAsk`.
   */
  permissionMode: PermissionMode.optional(),
  /** Turn limit of one run. */
  maxTurns: z.number().int().positive().optional(),
  /**
   * Most tokens (all input, cache reads and writes included, plus output) one agent of this
   * type and its descendants may use. A Delegate extension, unknown to Claude Code.
   */
  maxTokens: z.number().int().positive().optional(),
  /**
   * Most US dollars one agent of this type and its descendants may spend (priced by the
   * session's price table). A Delegate extension, unknown to Claude Code.
   */
  maxCostUsd: z.number().positive().optional(),
  /** Always run in the background. */
  background: z.boolean().optional(),
  /** Persistent memory scope. */
  memory: AgentMemoryScope.optional(),
  /** Run inside a fresh git worktree. */
  isolation: z.literal('worktree').optional(),
  /** Display color. */
  color: AgentColor.optional(),
  /** MCP servers the agent uses: names, or inline `{ name: config }` objects. */
  mcpServers: z.array(z.union([z.string(), z.record(z.string(), z.unknown())])).optional(),
  /** Patterns of MCP server names that must be connected for the agent to run. */
  requiredMcpServers: z.array(z.string()).optional(),
  /** Session hooks the agent registers. */
  hooks: z.record(z.string(), z.unknown()).optional(),
  /** Skills preloaded into the agent. */
  skills: z.array(z.string()).optional(),
  /** Text that opens the agent's first user message. */
  initialPrompt: z.string().optional(),
  /** Leave project instruction files (CLAUDE.md and the like) out of the agent's context. */
  omitClaudeMd: z.boolean().optional(),
  /** Where the definition came from. */
  source: AgentSource,
  /** Directory the definition was loaded from (`built-in` for built-ins). */
  baseDir: z.string(),
  /** File the definition was read from, when there is one. */
  filePath: z.string().optional(),
  /** Plugin that supplied the definition, for `plugin` sources. */
  plugin: z.string().optional(),
  /** Returns the agent's system prompt. */
  getSystemPrompt: z.custom<(params?: SystemPromptParams) => string>(
    (value) => typeof value === 'function',
    { message: 'getSystemPrompt must be a function' },
  ),
});
export type AgentDefinition = z.infer<typeof AgentDefinition>;

/** The agents a caller can see. */
export type AgentDefinitionsResult = {
  /** One definition per type, after precedence. */
  activeAgents: AgentDefinition[];
  /** Every definition loaded, including overridden ones. */
  allAgents: AgentDefinition[];
  /** Types the current agent may spawn (from `Agent(a, b)` in its tools), if restricted. */
  allowedAgentTypes?: string[];
};
