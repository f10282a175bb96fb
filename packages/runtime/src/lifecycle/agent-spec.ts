import { isAbsolute } from 'node:path';
import { DelegateError, PermissionMode } from '@delegate/core';
import { z } from 'zod';

const ApiToolDefinitionSchema = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});

const AbsolutePath = z.string().min(1).refine(isAbsolute, 'an absolute path');

/**
 * The git worktree an agent works (or last worked) in, as its metadata records it. Read back
 * from a file, it is checked against git (`findAgentWorktree`) before the agent works there.
 */
const RecordedWorktreeSchema = z.object({
  /** Directory of the worktree. */
  worktreePath: AbsolutePath,
  /** Branch checked out in it (`delegate/<slug>`). */
  worktreeBranch: z.string().regex(/^delegate\/[A-Za-z0-9][A-Za-z0-9_%+-]{0,127}$/),
  /** Commit the branch started from. */
  headCommit: z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/),
  /** Top level of the repository it belongs to. */
  gitRoot: AbsolutePath,
  /** The agent's directory in it. */
  cwd: AbsolutePath,
  /** Ignored entries its checkout made before the agent ran. */
  ignoredAtStart: z.array(z.string()).optional(),
});

/** Everything that defines a sub-agent's runs, as stored in its transcript metadata. */
export const AgentSpecSchema = z.object({
  /** Agent id (letters, digits, `-`, `_`). */
  agentId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/),
  /** Agent type (`fork` for forks). */
  agentType: z.string().min(1),
  /** Short description from the Agent tool call. */
  description: z.string(),
  /** Name to address it with SendMessage. */
  name: z.string().optional(),
  /** True for a fork of its caller. */
  isFork: z.boolean(),
  /** True for a built-in agent type. */
  isBuiltIn: z.boolean(),
  /** Model id. */
  model: z.string().min(1),
  /** System prompt blocks sent on every request. */
  systemPrompt: z.array(z.string()),
  /** User context of its requests. */
  userContext: z.record(z.string(), z.string()).optional(),
  /** System context of its requests. */
  systemContext: z.record(z.string(), z.string()).optional(),
  /** Exact tool definitions (forks reuse the parent's). */
  toolDefinitions: z.array(ApiToolDefinitionSchema).optional(),
  /** Working directory. */
  cwd: z.string().min(1),
  /** Query source of its requests. */
  querySource: z.string(),
  /** Permission mode it runs with. */
  permissionMode: PermissionMode,
  /** Turn limit of one run. */
  maxTurns: z.number().int().positive().optional(),
  /** Reasoning effort. */
  effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional(),
  /** The agent that spawned it. */
  parentAgentId: z.string().optional(),
  /** The id of the Agent call that started it (a host settling that call after a crash finds it by this). */
  parentToolUseId: z.string().optional(),
  /** Runs in a git worktree (recreated when a finished agent whose worktree was removed is continued). */
  isolation: z.literal('worktree').optional(),
  /** Its worktree (the last one, when that was removed): where a resume goes on, or makes a fresh one from. */
  worktree: RecordedWorktreeSchema.optional(),
  /** The agent's own token budget (the least of its definition's and its Agent call's). */
  maxTokens: z.number().int().positive().optional(),
  /** The agent's own cost budget in US dollars (the least of its definition's and its Agent call's). */
  maxCostUsd: z.number().positive().optional(),
  /** Thinking budget in tokens, from a numeric `effort` in the definition. */
  thinkingBudget: z.number().int().positive().optional(),
});
/** Everything that defines a sub-agent's runs, as stored in its transcript metadata. */
export type AgentSpec = z.infer<typeof AgentSpecSchema>;

/** Validates agent metadata read from a transcript folder; `where` names the file in the error. */
export function parseAgentSpec(value: unknown, where: string): AgentSpec {
  const parsed = AgentSpecSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${where}: not valid agent metadata (${issue?.path.join('.') || 'value'}: ${issue?.message ?? 'invalid'}). Start a new agent instead of resuming this one.`,
    );
  }
  return parsed.data;
}
