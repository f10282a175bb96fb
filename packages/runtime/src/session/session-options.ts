import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import type { AgentDefinitionsOptions } from '@delegate/agent-defs';
import {
  type AgentDefinitionsResult,
  type AgentEvent,
  type McpClientState,
  type PermissionMode,
  type PermissionRuleValue,
  type ThinkingConfig,
  type Tool,
  DelegateError,
  PermissionMode as PermissionModeSchema,
  PermissionRule,
  PermissionRuleValue as PermissionRuleValueSchema,
  MAX_TIMER_MS,
  ModelPrice,
  type PriceTable,
  PERMISSION_RULE_TOOL_NAME_PATTERN,
  TOOL_NAMES,
  permissionRuleProblem,
} from '@delegate/core';
import { type CacheBreakDiagnosis, type ForkLayout, FORK_LAYOUTS } from '@delegate/fork-cache';
import { permissionRuleValueFromString } from '@delegate/tool-filter';
import { z } from 'zod';
import type { AskHandler } from '../permissions.js';
import { MIN_SECRET_LENGTH } from '../util/redact-secrets.js';
import { closedObject, isUnknownOptionIssue } from './closed-object.js';
import type { MainAgentToolLists } from './main-agent-tools.js';

/** MCP servers as the session sees them (the `@delegate/tools` MCP manager fits). */
export type McpSource = {
  /** Connection state of every configured server. */
  getClients(): McpClientState[];
  /** Tools of the connected servers. */
  getTools(): Tool[];
};

/** One sub-agent request's cache diagnosis, as `debugCacheDiagnosis` receives it. */
export type CacheDiagnosisEntry = {
  /** The sub-agent's id. */
  agentId: string;
  /** Its type (`fork` for forks). */
  agentType: string;
  /** 1-based number of the request in the sub-agent's run. */
  turn: number;
  /**
   * What the request was compared with: `parent` (a fork's first request against the
   * parent's last request), `previous` (the sub-agent's own previous request), or `none`
   * (a fresh agent's first request, which has nothing earlier to read).
   */
  comparedWith: 'parent' | 'previous' | 'none';
  /** The diagnosis (`diagnoseCacheBreak` of `@delegate/fork-cache`), unless `comparedWith` is `none`. */
  diagnosis?: CacheBreakDiagnosis;
  /** The diagnosis in one line (`formatCacheBreak`), as the default log writes it. */
  line: string;
};

/** A permission rule as options take it: a rule string (`Bash(git commit:*)`), a rule object, or a tool and content. */
export type PermissionRuleInput = string | PermissionRule | PermissionRuleValue;

/** Options of `DelegateSession.create`, validated (a bad field is named in the error). */
export type DelegateSessionOptions = {
  /** Working directory of the main agent; project agents, project memory and worktrees resolve against it. */
  cwd: string;
  /** SDK client; default one from `apiKey`/`baseURL` or the environment. */
  client?: Anthropic;
  /** API key when no client is given (default `ANTHROPIC_API_KEY`). */
  apiKey?: string;
  /** Base URL when no client is given (default `ANTHROPIC_BASE_URL`; the simulator's URL, for example). */
  baseURL?: string;
  /** Main model, alias or id (default `sonnet`). */
  model?: string;
  /** Base tools of the main agent and of sub-agent pools (default the built-in tools). */
  tools?: Tool[];
  /** Agent definitions (default loaded from disk for `cwd` and `homeDir`). */
  agentDefinitions?: AgentDefinitionsResult;
  /** Options for loading definitions from disk. */
  agentLoading?: Partial<AgentDefinitionsOptions>;
  /** Main agent's permission mode (default `default`). */
  permissionMode?: PermissionMode;
  /** Rules that approve calls, as rule strings or objects. */
  allowRules?: PermissionRuleInput[];
  /** Rules that refuse calls and hide agent types, as rule strings or objects. */
  denyRules?: PermissionRuleInput[];
  /** Rules whose calls are always put to the person (denied where nobody can be asked). */
  askRules?: PermissionRuleInput[];
  /** Asks the person at the terminal; without it, a question is a denial. */
  ask?: AskHandler;
  /** Where transcripts go; `false` for none (default `<homeDir>/.delegate/transcripts`). */
  transcriptDir?: string | false;
  /** Session id: letters, digits, `-` and `_` (default a new uuid). */
  sessionId?: string;
  /**
   * Pick up the session `sessionId` recorded in `transcriptDir`: its main conversation is
   * read back from `<transcriptDir>/<sessionId>.jsonl` (a torn last line is skipped), the
   * transcript goes on in the same file, and every `<task-notification>` that was queued
   * for the main agent but never carried by a request is queued again, once, for the next
   * turn (its task is back in `session.tasks`). Needs `sessionId` and transcripts; a missing
   * file is a `NOT_FOUND` error naming it (default false).
   */
  resume?: boolean;
  /** Replaces the main system prompt's introduction. */
  customSystemPrompt?: string;
  /** Appended to the main system prompt. */
  appendSystemPrompt?: string;
  /** Context prepended to the conversation (project instructions and the like). */
  userContext?: Record<string, string>;
  /** Thinking configuration of the main agent (inherited by forks). */
  thinking?: ThinkingConfig;
  /** MCP servers whose tools join the pools. */
  mcp?: McpSource;
  /** Environment to read switches from (`DELEGATE_DISABLE_BACKGROUND_TASKS`, API key and URL). */
  env?: NodeJS.ProcessEnv;
  /** Home directory: user agents, user-scope memory and the default transcript folder (default the OS home; a relative one is taken from the process working directory, a file in the way is refused). */
  homeDir?: string;
  /**
   * Hooks of the main agent, in the shape of an agent file's `hooks` (a CLI's `--agent`
   * definition's): its `PreToolUse` and `PostToolUse` command hooks run around each tool call of
   * the main agent and of its forks; other events are not run (a process warning says so). An
   * entry that cannot run is refused at `create`.
   */
  mainAgentHooks?: Record<string, unknown>;
  /**
   * The `tools` and `disallowedTools` lists of the definition the main thread runs as (a CLI's
   * `--agent` file), applied to the main agent's base tools and MCP tools (also those of a
   * server that connects later) as `resolveAgentTools` of `@delegate/tool-filter` applies them
   * to the main thread: `disallowedTools: ['mcp__github']` removes every tool of that server,
   * `tools: ['Read']` leaves Read alone of them. The session's own tools (Agent, TaskOutput,
   * TaskStop, SendMessage) stay; sub-agents' pools are assembled as before, and forks get the
   * main agent's filtered list (default: no filter).
   */
  mainAgentTools?: MainAgentToolLists;
  /** Leaving out `subagent_type` forks the caller (default false). */
  forkEnabled?: boolean;
  /** While forking is on, every spawn (fork or named type) runs in the background (default false). */
  forkForceAsync?: boolean;
  /** Every spawn runs in the background (default false). */
  coordinatorMode?: boolean;
  /** Nothing runs in the background (default false, or `DELEGATE_DISABLE_BACKGROUND_TASKS=1`). */
  backgroundTasksDisabled?: boolean;
  /** Agent types go into a `<system-reminder>` message, keeping the tools block cache-stable (default true). */
  agentListInMessages?: boolean;
  /** Most background agents running at once (default 8). */
  maxBackgroundAgents?: number;
  /** Deepest nesting of sub-agents (default 3). */
  maxDepth?: number;
  /** Milliseconds before a foreground agent's `agent.background_hint` (default 2000). */
  backgroundHintMs?: number;
  /** Longest wait for required MCP servers, in milliseconds (default 30000). */
  mcpWaitMs?: number;
  /** Poll interval of that wait, in milliseconds (default 500). */
  mcpPollMs?: number;
  /** Model of sub-agents whose call and definition name none (default `sonnet`). */
  defaultSubagentModel?: string;
  /** Finished agents kept whole for SendMessage; older ones are compacted (default 100). */
  maxRetainedAgents?: number;
  /**
   * Finished agents (and finished tasks) remembered past `maxRetainedAgents`, as a summary
   * (id, type, status, usage, capped report); older ones are forgotten, so memory stays
   * bounded in a long session (default 1000). A forgotten agent's name stays taken.
   */
  maxAgentSummaries?: number;
  /** Parent directory of agent worktrees (default under the OS temp folder). */
  worktreeRoot?: string;
  /** Called when a lifecycle event listener throws (default a process warning); tests rethrow. */
  onEventListenerError?: (error: unknown, event: AgentEvent) => void;
  /**
   * How a fork's copy of the parent's assistant turn is laid out (default `per-child`, the
   * layout that measured best in `bench/src/fork-cache.bench.ts`): `per-child` keeps only
   * the fork's own Agent call, so siblings start at once and each writes a constant short
   * tail; `shared-message` keeps every sibling's call, and siblings wait for the first one
   * only when what they share is worth a time to first token (see the README).
   */
  forkLayout?: ForkLayout;
  /**
   * Diagnose every sub-agent request's prompt cache against what it should read (a fork's
   * first request against the parent's last, later requests against the agent's previous
   * one): `true` writes one line per request to stderr, a function receives each entry.
   * Default off, or on with `DELEGATE_DEBUG_CACHE=1`. Costs a hash of every request.
   */
  debugCacheDiagnosis?: boolean | ((entry: CacheDiagnosisEntry) => void);
  /**
   * Most tokens the whole session may use: every agent's input (cache reads and writes
   * included) and output. No agent sends a request once it is spent (default no limit).
   */
  maxTokens?: number;
  /** Most US dollars the whole session may spend, priced by `priceTable` (default no limit). */
  maxCostUsd?: number;
  /**
   * Prices per model id or alias, merged over `DEFAULT_PRICE_TABLE` from `@delegate/core`
   * (an entry here wins; see `PriceTable` for the lookup order).
   */
  priceTable?: PriceTable;
  /**
   * Milliseconds a streaming response may go without an event before it counts as stalled:
   * the request is aborted and retried (default 90000; time spent running tools never counts).
   */
  streamIdleTimeoutMs?: number;
  /** Stalls in a row of one request after which the agent fails with `STREAM_STALLED` (default 3). */
  maxConsecutiveStalls?: number;
  /**
   * Values replaced by `[REDACTED]` in every tool result of every agent, before the model, a
   * transcript or an event sees them (a server's own token, a database password). The API key
   * and auth token of the session's client always are (when 8 characters or longer). A value
   * under 8 characters is refused: it could not be redacted without mangling ordinary text.
   */
  secrets?: string[];
};

/** The options with every rule turned into a rule object. */
export type ValidatedSessionOptions = Omit<
  DelegateSessionOptions,
  'allowRules' | 'denyRules' | 'askRules'
> & {
  /** Rules that approve calls. */
  allowRules: PermissionRule[];
  /** Rules that refuse calls. */
  denyRules: PermissionRule[];
  /** Rules that always ask. */
  askRules: PermissionRule[];
};

const isFunction = (value: unknown): boolean => typeof value === 'function';
const functionOf = (what: string) =>
  z.custom<(...args: never[]) => unknown>(isFunction, { message: `expected ${what} (a function)` });

const ClientSchema = z.custom<Anthropic>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { messages?: { create?: unknown } }).messages?.create === 'function',
  { message: 'expected an @anthropic-ai/sdk client (an object with messages.create)' },
);

const ToolSchema = z
  .custom<Tool>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as Tool).name === 'string' &&
      isFunction((value as Tool).call) &&
      isFunction((value as Tool).description),
    { message: 'expected a tool (an object with name, description() and call())' },
  )
  .superRefine((tool, context) => {
    const { timeoutMs } = tool;
    if (timeoutMs === undefined) return;
    if (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs <= 0)
      context.addIssue({
        code: 'custom',
        path: ['timeoutMs'],
        message: `a tool's timeoutMs must be a number of milliseconds, more than 0 (Infinity for no limit), got ${String(timeoutMs)}`,
      });
  });

const DefinitionsSchema = z.custom<AgentDefinitionsResult>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as AgentDefinitionsResult).activeAgents) &&
    Array.isArray((value as AgentDefinitionsResult).allAgents),
  { message: 'expected agent definitions ({ activeAgents, allAgents })' },
);

const McpSchema = z.custom<McpSource>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    isFunction((value as McpSource).getClients) &&
    isFunction((value as McpSource).getTools),
  { message: 'expected an MCP source (an object with getClients() and getTools())' },
);

// By `type`, so a wrong field of `enabled` is named (not "expected 'disabled'").
const ThinkingSchema = z.discriminatedUnion(
  'type',
  [
    closedObject({ type: z.literal('disabled') }),
    closedObject({
      type: z.literal('enabled'),
      budgetTokens: z
        .number({ error: 'budgetTokens must be a whole number of at least 1024' })
        .int()
        .min(1024),
    }),
    closedObject({ type: z.literal('adaptive') }),
  ],
  {
    error:
      "must be { type: 'disabled' }, { type: 'adaptive' } or { type: 'enabled', budgetTokens: 1024 or more }",
  },
);

const RULE_EXAMPLES =
  'such as "Bash(git commit:*)", "Read", "Agent(Explore)", or "mcp__github" (also "mcp__github__*") for every tool of that MCP server';

function ruleFromString(
  spec: string,
  behavior: 'allow' | 'deny' | 'ask',
  context: z.RefinementCtx,
) {
  const value = permissionRuleValueFromString(spec);
  const problem = permissionRuleProblem(value);
  if (problem !== undefined) {
    context.addIssue({
      code: 'custom',
      message: `"${spec.slice(0, 80)}" is not a permission rule (${problem}): write a tool name, optionally with content in parentheses, ${RULE_EXAMPLES}`,
    });
    return z.NEVER;
  }
  return { source: 'session' as const, ruleBehavior: behavior, ruleValue: value };
}

// A rule object naming no possible tool would silently match nothing (a deny rule then denies nothing).
function checkRuleValue(
  value: { toolName: string; ruleContent?: string | undefined },
  path: string[],
  context: z.RefinementCtx,
): void {
  const problem = permissionRuleProblem(value);
  if (problem === undefined) return;
  const namesNoTool = !PERMISSION_RULE_TOOL_NAME_PATTERN.test(value.toolName);
  context.addIssue({
    code: 'custom',
    path: namesNoTool ? [...path, 'toolName'] : path,
    message: namesNoTool
      ? `"${value.toolName.slice(0, 80)}" is not a tool name: use letters, digits, "_" and "-", starting with a letter (content goes in ruleContent), or "mcp__<server>__*" for every tool of an MCP server`
      : problem,
  });
}

// Closed: a misspelt `ruleContent` would otherwise be dropped, and the rule match the whole tool.
const RuleValueSchema = closedObject(PermissionRuleValueSchema.shape);
const RuleSchema = closedObject({ ...PermissionRule.shape, ruleValue: RuleValueSchema });

function rulesSchema(behavior: 'allow' | 'deny' | 'ask') {
  const rule = z.union([
    z.string().transform((spec, context) => ruleFromString(spec, behavior, context)),
    RuleSchema.refine((value) => value.ruleBehavior === behavior, {
      message: `a rule with ruleBehavior "${behavior}" (put other rules in their own list)`,
    }).superRefine((value, context) => checkRuleValue(value.ruleValue, ['ruleValue'], context)),
    RuleValueSchema.superRefine((value, context) => checkRuleValue(value, [], context)).transform(
      (value) => ({
        source: 'session' as const,
        ruleBehavior: behavior,
        ruleValue: value,
      }),
    ),
  ]);
  return z.array(rule).default([]);
}

const positiveInteger = z.number().int().positive();

// What the Messages API takes as a tool name.
const API_TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;
// The tools every session adds itself: a given tool of the same name would make every request fail.
const SESSION_TOOL_NAMES: ReadonlySet<string> = new Set([
  TOOL_NAMES.agent,
  TOOL_NAMES.taskOutput,
  TOOL_NAMES.taskStop,
  TOOL_NAMES.sendMessage,
]);

/** `tools`: names the API takes, each once, none the session adds itself. */
const ToolsSchema = z.array(ToolSchema).superRefine((tools, context) => {
  const seen = new Set<string>();
  tools.forEach((tool, index) => {
    const problem = !API_TOOL_NAME.test(tool.name)
      ? 'is not a name the Messages API takes (1 to 128 letters, digits, "_" or "-")'
      : SESSION_TOOL_NAMES.has(tool.name)
        ? 'is a tool the session adds itself (Agent, TaskOutput, TaskStop, SendMessage); give yours another name'
        : seen.has(tool.name)
          ? 'is the name of an earlier tool too; tool names must be unique'
          : undefined;
    seen.add(tool.name);
    if (problem)
      context.addIssue({
        code: 'custom',
        path: [index, 'name'],
        message: `${JSON.stringify(tool.name.slice(0, 80))} ${problem}`,
      });
  });
});

/** A system prompt part: the API refuses a text block with no visible text. */
const promptText = z.string().refine((text) => text === '' || text.trim() !== '', {
  message:
    'holds only whitespace, which the Messages API refuses as a text block; leave it out or give text',
});

/** What `agentLoading` passes on to the agent loader (`cwd` and `homeDir` default to the session's). */
const AgentLoadingSchema = closedObject({
  cwd: z.string().min(1).optional(),
  homeDir: z.string().min(1).optional(),
  // The `--agents` value, checked by the loader (its problems are diagnostics).
  flagAgents: z.unknown().optional(),
  policyDir: z.string().min(1).optional(),
  pluginDirs: z.array(z.string().min(1)).optional(),
  exploreModel: z.string().trim().min(1).optional(),
  concurrency: positiveInteger.optional(),
});

/** `priceTable`: any model id or alias, each with exactly the prices of a `ModelPrice`. */
const PriceTableSchema = z.record(z.string(), closedObject(ModelPrice.shape));

/**
 * `apiKey`: a key with a space, line break or control character inside cannot be sent (it is
 * an HTTP header); the error it would cause quotes it. Never shown.
 */
const ApiKeySchema = z
  .string()
  .min(1)
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  .refine((key) => !/[\s\u0000-\u001f\u007f]/u.test(key.trim()), {
    message:
      'holds a space, line break or control character inside it, which no API key has (was it pasted across lines, or read from a file with more than the key?)',
  });
const milliseconds = z
  .number()
  .int()
  .nonnegative()
  .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer Node keeps)`);
const positiveMilliseconds = milliseconds.positive();

/** The schema `DelegateSession.create` checks its options with. */
export const DelegateSessionOptionsSchema = closedObject(
  {
    cwd: z.string().min(1),
    client: ClientSchema.optional(),
    apiKey: ApiKeySchema.optional(),
    baseURL: z.string().url().optional(),
    model: z.string().trim().min(1).optional(),
    tools: ToolsSchema.optional(),
    agentDefinitions: DefinitionsSchema.optional(),
    agentLoading: AgentLoadingSchema.optional(),
    permissionMode: PermissionModeSchema.optional(),
    allowRules: rulesSchema('allow'),
    denyRules: rulesSchema('deny'),
    askRules: rulesSchema('ask'),
    ask: functionOf('an ask handler').optional(),
    transcriptDir: z
      .union([
        z
          .string()
          .min(1, { error: 'must be a directory path (not empty), or false for no transcripts' }),
        z.literal(false, { error: 'must be a directory path, or false for no transcripts' }),
      ])
      .optional(),
    sessionId: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, 'use letters, digits, "-" and "_" (at most 128)')
      .optional(),
    resume: z.boolean().optional(),
    customSystemPrompt: promptText.optional(),
    appendSystemPrompt: promptText.optional(),
    userContext: z.record(z.string(), z.string()).optional(),
    thinking: ThinkingSchema.optional(),
    mcp: McpSchema.optional(),
    env: z.record(z.string(), z.string().optional()).optional(),
    homeDir: z.string().min(1).optional(),
    forkEnabled: z.boolean().optional(),
    forkForceAsync: z.boolean().optional(),
    coordinatorMode: z.boolean().optional(),
    backgroundTasksDisabled: z.boolean().optional(),
    agentListInMessages: z.boolean().optional(),
    maxBackgroundAgents: positiveInteger.optional(),
    maxDepth: z.number().int().nonnegative().optional(),
    backgroundHintMs: milliseconds.optional(),
    mcpWaitMs: milliseconds.optional(),
    mcpPollMs: positiveMilliseconds.optional(),
    defaultSubagentModel: z.string().trim().min(1).optional(),
    maxRetainedAgents: z.number().int().nonnegative().optional(),
    maxAgentSummaries: z.number().int().nonnegative().optional(),
    worktreeRoot: z.string().min(1).optional(),
    onEventListenerError: functionOf('an error handler').optional(),
    forkLayout: z
      .enum(FORK_LAYOUTS as [ForkLayout, ...ForkLayout[]], {
        message: `use one of ${FORK_LAYOUTS.map((layout) => `'${layout}'`).join(', ')}`,
      })
      .optional(),
    debugCacheDiagnosis: z
      .union([z.boolean(), functionOf('a diagnosis handler')], {
        message: 'expected true, false or a function that takes each diagnosis',
      })
      .optional(),
    maxTokens: positiveInteger.optional(),
    maxCostUsd: z.number().positive().optional(),
    priceTable: PriceTableSchema.optional(),
    streamIdleTimeoutMs: positiveMilliseconds.optional(),
    maxConsecutiveStalls: positiveInteger.optional(),
    mainAgentHooks: z.record(z.string(), z.unknown()).optional(),
    mainAgentTools: closedObject({
      tools: z.array(z.string()).optional(),
      disallowedTools: z.array(z.string()).optional(),
    }).optional(),
    secrets: z
      .array(
        z.string().min(MIN_SECRET_LENGTH, {
          message: `is under ${MIN_SECRET_LENGTH} characters: a value that short cannot be redacted without mangling ordinary text, so it would not be protected (use a longer secret, or leave it out)`,
        }),
      )
      .optional(),
  },
  'DelegateSessionOptions',
);

function pathText(path: readonly PropertyKey[]): string {
  return path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
}

/** A root type error: the value was not the kind of thing a union branch takes at all. */
function isWrongKind(branch: readonly z.core.$ZodIssue[]): boolean {
  return branch.length === 1 && branch[0]?.code === 'invalid_type' && branch[0].path.length === 0;
}

/** For a union, the issue of the branch the value was meant for. */
function innerIssue(issue: z.core.$ZodIssueInvalidUnion): z.core.$ZodIssue | undefined {
  // The branch with the fewest issues past the type check of the value itself: a rule object
  // with a misspelt key is a rule object, not a tool-and-content object missing `toolName`.
  let meant: z.core.$ZodIssue[] | undefined;
  for (const branch of issue.errors) {
    if (branch.length > 0 && !isWrongKind(branch) && (!meant || branch.length < meant.length))
      meant = branch;
  }
  if (meant)
    return (
      meant.find(isUnknownOptionIssue) ?? meant.find((inner) => inner.code === 'custom') ?? meant[0]
    );
  const firsts = issue.errors.map((branch) => branch[0]).filter((inner) => inner !== undefined);
  // A custom issue means the value had the right shape and failed a check of its own: the most telling.
  return firsts.find((inner) => inner.code === 'custom') ?? firsts[0];
}

/** An issue with each union replaced by the issue of its meant branch, at the full path. */
function resolveUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  const inner = innerIssue(issue);
  return inner ? resolveUnion({ ...inner, path: [...issue.path, ...inner.path] }) : issue;
}

/** `options.thinking.colour is not an option …`, `options.maxDepth: Too small …`. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const path = `options${pathText(issue.path)}`;
  return isUnknownOptionIssue(issue) ? `${path} ${issue.message}` : `${path}: ${issue.message}`;
}

/**
 * The issues to report, unions resolved, unknown keys first: `budget_tokens is not an option`
 * explains the `budgetTokens` missing beside it.
 */
function reportedIssues(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const resolved = issues.map(resolveUnion);
  return [
    ...resolved.filter(isUnknownOptionIssue),
    ...resolved.filter((issue) => !isUnknownOptionIssue(issue)),
  ];
}

function checkResume(options: ValidatedSessionOptions): void {
  if (!options.resume) return;
  const missing =
    options.sessionId === undefined
      ? 'options.resume needs options.sessionId (the id of the session to pick up)'
      : options.transcriptDir === false
        ? 'options.resume needs transcripts, and options.transcriptDir is false (give the directory the session was recorded in)'
        : undefined;
  if (missing)
    throw new DelegateError('INVALID_ARGUMENT', `DelegateSession.create: ${missing}.`, {
      details: { issues: [{ path: ['resume'], message: missing }] },
    });
}

/**
 * Checks `DelegateSession.create`'s options and turns every rule into a rule object.
 * Throws an `INVALID_ARGUMENT` DelegateError naming the bad field (`options.denyRules[0]`)
 * and what it should be.
 */
export function validateSessionOptions(options: unknown): ValidatedSessionOptions {
  const parsed = DelegateSessionOptionsSchema.safeParse(options);
  if (parsed.success) {
    const validated = parsed.data as unknown as ValidatedSessionOptions;
    checkResume(validated);
    return validated;
  }
  const issues = reportedIssues(parsed.error.issues);
  const text = issues.slice(0, 3).map(describeIssue).join('; ');
  throw new DelegateError('INVALID_ARGUMENT', `DelegateSession.create: ${text}.`, {
    details: { issues: issues.map((issue) => ({ path: issue.path, message: issue.message })) },
  });
}

/**
 * Makes `options.cwd` absolute (a relative one is taken from the process's working
 * directory, once, so file tools do not resolve it twice) and checks that it is an existing
 * directory (returns the options with it); throws an `INVALID_ARGUMENT` DelegateError naming `options.cwd` otherwise.
 */
export async function resolveWorkingDirectory(
  options: ValidatedSessionOptions,
): Promise<ValidatedSessionOptions> {
  const given = options.cwd;
  const absolute = given.includes('\0') ? undefined : resolve(given);
  const stats = absolute ? await stat(absolute).catch(() => undefined) : undefined;
  if (absolute && stats?.isDirectory()) {
    return { ...options, cwd: absolute };
  }
  const reason = absolute
    ? stats
      ? 'is not a directory'
      : 'does not exist'
    : 'contains a NUL byte';
  const message = `options.cwd: ${JSON.stringify(given)}${absolute && absolute !== given ? ` (${absolute})` : ''} ${reason}; give the existing directory the main agent works in`;
  throw new DelegateError('INVALID_ARGUMENT', `DelegateSession.create: ${message}.`, {
    details: { issues: [{ path: ['cwd'], message }] },
  });
}

/**
 * Makes `options.homeDir`, when set, absolute (from the process's working directory, as
 * `cwd`) and checks that it is a folder or does not exist yet (a new user's home holds no
 * agents; memory and transcripts make their folders when first written). Throws an
 * `INVALID_ARGUMENT` DelegateError naming `options.homeDir` when a file (or a path through a
 * file) is in the way, or the path cannot be read.
 */
export async function resolveHomeDirectory(
  options: ValidatedSessionOptions,
): Promise<ValidatedSessionOptions> {
  const given = options.homeDir;
  if (given === undefined) return options;
  const absolute = given.includes('\0') ? undefined : resolve(given);
  const reason = absolute ? await folderProblem(absolute) : 'contains a NUL byte';
  if (reason === undefined) return { ...options, homeDir: absolute! };
  const message = `options.homeDir: ${JSON.stringify(given)}${absolute && absolute !== given ? ` (${absolute})` : ''} ${reason}; give the home folder (user agents, user memory and the default transcript folder live under it), or leave it out for the OS home`;
  throw new DelegateError('INVALID_ARGUMENT', `DelegateSession.create: ${message}.`, {
    details: { issues: [{ path: ['homeDir'], message }] },
  });
}

/** Why `path` cannot be (or become) a folder, or undefined when it is one or is missing. */
async function folderProblem(path: string): Promise<string | undefined> {
  const stats = await stat(path).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? undefined : (code ?? 'an error');
  });
  if (stats === 'ENOTDIR') return 'has a file where a folder should be';
  if (typeof stats === 'string') return `cannot be read (${stats})`;
  if (stats && !stats.isDirectory()) return 'is a file, not a folder';
  return undefined;
}

/**
 * Checks that `options.worktreeRoot`, when set, is a folder or does not exist yet (it is
 * made when the first worktree agent starts); throws an `INVALID_ARGUMENT` DelegateError
 * naming `options.worktreeRoot` when a file (or a path through a file) is in the way.
 */
export async function checkWorktreeRoot(options: ValidatedSessionOptions): Promise<void> {
  const given = options.worktreeRoot;
  if (given === undefined) return;
  const absolute = given.includes('\0') ? undefined : resolve(options.cwd, given);
  const reason = absolute ? await folderProblem(absolute) : 'contains a NUL byte';
  if (reason === undefined) return;
  const message = `options.worktreeRoot: ${JSON.stringify(given)}${absolute && absolute !== given ? ` (${absolute})` : ''} ${reason}; give a folder for agent worktrees (made if missing), or leave it out for the default under the temp folder`;
  throw new DelegateError('INVALID_ARGUMENT', `DelegateSession.create: ${message}.`, {
    details: { issues: [{ path: ['worktreeRoot'], message }] },
  });
}
