import { type AgentDefinition, DelegateError } from '@delegate/core';
import { z } from 'zod';

/** One command hook, as Claude Code settings write it. */
export const CommandHookSchema = z.object({
  /** Only command hooks run. */
  type: z.literal('command'),
  /** Shell command; it gets the call as JSON on stdin. */
  command: z.string().min(1),
  /** Seconds before the command is killed (default 60). */
  timeout: z.number().positive().optional(),
});
/** One command hook, as Claude Code settings write it. */
export type CommandHook = z.infer<typeof CommandHookSchema>;

/** Hooks for the tool names a matcher selects. */
export const HookMatcherSchema = z.object({
  /** Tool names: `Bash`, `Write|Edit`, a regular expression (`mcp__.*`); absent, empty or `*` for all. */
  matcher: z.string().optional(),
  /** Commands to run for a matching call. */
  hooks: z.array(CommandHookSchema),
});
/** Hooks for the tool names a matcher selects. */
export type HookMatcher = z.infer<typeof HookMatcherSchema>;

/** The tool-call hooks Delegate runs for a sub-agent. */
export type AgentToolHooks = {
  /** Run before a call; exit code 2 blocks it with stderr as the reason. */
  PreToolUse: HookMatcher[];
  /** Run after a call; exit code 2 gives stderr to the model. */
  PostToolUse: HookMatcher[];
};

/** The hooks of a definition Delegate runs, and the events it does not. */
export type ParsedAgentHooks = {
  /** PreToolUse and PostToolUse hooks. */
  hooks: AgentToolHooks;
  /** Hook events in the definition that Delegate does not run (`Stop`, `SessionStart`, …). */
  ignoredEvents: string[];
};

const RUN_EVENTS = ['PreToolUse', 'PostToolUse'] as const;

/** The sentence every message about a hook that cannot run carries: what Delegate runs, and why it refuses. */
export const RUNNABLE_HOOKS_HINT =
  'Delegate runs PreToolUse and PostToolUse command hooks ({ matcher, hooks: [{ type: "command", command }] }), and a guard that cannot run would guard nothing';

/** What hook parsing reads of a definition (the main thread's hooks come without a file). */
type HookOwner = Pick<AgentDefinition, 'agentType' | 'filePath' | 'hooks'>;

function invalidHooks(agent: HookOwner, where: string, reason: string): DelegateError {
  const file = agent.filePath ? ` (${agent.filePath})` : '';
  return new DelegateError(
    'INVALID_AGENT_DEFINITION',
    `Agent "${agent.agentType}"${file}: hooks.${where}: ${reason}; ${RUNNABLE_HOOKS_HINT}. Fix the hook or remove it.`,
    { details: { agentType: agent.agentType, where, reason } },
  );
}

function checkMatcher(agent: HookOwner, where: string, matcher: string | undefined): void {
  if (matcher === undefined || isPlainMatcher(matcher)) return;
  try {
    new RegExp(`^(?:${matcher})$`);
  } catch (error) {
    throw invalidHooks(
      agent,
      `${where}.matcher`,
      `"${matcher}" is not a valid pattern (${String(error)})`,
    );
  }
}

function isPlainMatcher(matcher: string): boolean {
  return matcher === '' || matcher === '*' || /^[A-Za-z0-9_|-]+$/.test(matcher);
}

/** True when `matcher` selects `toolName` (exact names split on `|`, else an anchored pattern). */
export function hookMatches(matcher: string | undefined, toolName: string): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  if (isPlainMatcher(matcher)) return matcher.split('|').includes(toolName);
  return new RegExp(`^(?:${matcher})$`).test(toolName);
}

/**
 * Splits a definition's `hooks` by event: the PreToolUse and PostToolUse entries (which run;
 * `undefined` when there are none) and the names of the other events, which do not. A host
 * that passes a definition's hooks as `mainAgentHooks` keeps the first and reports the
 * second in its own words. Nothing is validated here ({@link parseAgentHooks} does that).
 */
export function splitToolHooks(hooks: Readonly<Record<string, unknown>> | undefined): {
  toolHooks?: Record<string, unknown>;
  otherEvents: string[];
} {
  const entries = Object.entries(hooks ?? {});
  const run = entries.filter(([event]) => (RUN_EVENTS as readonly string[]).includes(event));
  const otherEvents = entries
    .filter(([event]) => !(RUN_EVENTS as readonly string[]).includes(event))
    .map(([event]) => event);
  return { ...(run.length > 0 ? { toolHooks: Object.fromEntries(run) } : {}), otherEvents };
}

/**
 * Reads a definition's `hooks` in the shape Claude Code settings use. PreToolUse and
 * PostToolUse command hooks are returned to run; other events are listed as ignored; a
 * PreToolUse or PostToolUse entry that cannot run (another hook type, a bad matcher, a
 * missing command) throws `INVALID_AGENT_DEFINITION`, so the agent does not start unguarded.
 */
export function parseAgentHooks(agent: HookOwner): ParsedAgentHooks {
  const hooks: AgentToolHooks = { PreToolUse: [], PostToolUse: [] };
  const raw = agent.hooks ?? {};
  const ignoredEvents = splitToolHooks(raw).otherEvents;
  for (const event of RUN_EVENTS) {
    if (raw[event] === undefined) continue;
    const parsed = z.array(HookMatcherSchema).safeParse(raw[event]);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path =
        issue?.path
          .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
          .join('') ?? '';
      throw invalidHooks(agent, `${event}${path}`, issue?.message ?? 'not a list of hook matchers');
    }
    parsed.data.forEach((entry, index) => checkMatcher(agent, `${event}[${index}]`, entry.matcher));
    hooks[event] = parsed.data;
  }
  return { hooks, ignoredEvents };
}
