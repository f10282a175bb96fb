import { z } from 'zod';

/**
 * How tool calls are approved: `default` asks, `acceptEdits` approves file edits,
 * `bypassPermissions` approves everything, `plan` allows only reading until the plan is
 * accepted, `bubble` forwards questions to the parent agent, `dontAsk` denies what
 * would need a question.
 */
export const PermissionMode = z.enum([
  'default',
  'acceptEdits',
  'bypassPermissions',
  'plan',
  'bubble',
  'dontAsk',
]);
export type PermissionMode = z.infer<typeof PermissionMode>;

/** Where a setting or permission rule comes from (agent definitions use `AgentSource`). */
export const SettingSource = z.enum([
  'userSettings',
  'projectSettings',
  'localSettings',
  'flagSettings',
  'policySettings',
  'cliArg',
  'session',
]);
export type SettingSource = z.infer<typeof SettingSource>;

/** A tool name with optional content, as in `Bash(git status)` or `Agent(Explore)`. */
export const PermissionRuleValue = z.object({
  /** The tool the rule is about. */
  toolName: z.string(),
  /** What inside the parentheses, unescaped; absent for a whole-tool rule. */
  ruleContent: z.string().optional(),
});
export type PermissionRuleValue = z.infer<typeof PermissionRuleValue>;

/** An allow, deny or ask rule with the setting it came from. */
export const PermissionRule = z.object({
  /** Where the rule was configured, so an error can name it. */
  source: SettingSource,
  /** What the rule does. */
  ruleBehavior: z.enum(['allow', 'deny', 'ask']),
  /** Tool and content the rule matches. */
  ruleValue: PermissionRuleValue,
});
export type PermissionRule = z.infer<typeof PermissionRule>;

/** Everything that decides whether a tool call may run without asking. */
export const ToolPermissionContext = z.object({
  /** Current permission mode. */
  mode: PermissionMode,
  /** Rules that approve calls. */
  allowRules: z.array(PermissionRule).default([]),
  /** Rules that refuse calls (and hide denied agent types). */
  denyRules: z.array(PermissionRule).default([]),
  /** Rules that always ask. */
  askRules: z.array(PermissionRule).default([]),
  /** Directories besides the cwd that file tools may touch. */
  additionalWorkingDirectories: z.array(z.string()).default([]),
  /** True when no one can answer a question (background agents): ask means deny. */
  shouldAvoidPermissionPrompts: z.boolean().optional(),
});
export type ToolPermissionContext = z.infer<typeof ToolPermissionContext>;

/** The answer of a permission check. */
export type PermissionDecision =
  | { behavior: 'allow'; updatedInput?: unknown }
  | { behavior: 'deny'; message: string }
  | { behavior: 'ask'; message: string };
