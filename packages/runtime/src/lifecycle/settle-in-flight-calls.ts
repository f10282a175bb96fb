import {
  type AssistantMessage,
  type CanUseTool,
  type Message,
  TOOL_NAMES,
  type ToolResultBlock,
  type ToolUseBlock,
  type ToolUseContext,
  type UserMessage,
  DelegateError,
  createUserMessage,
  findToolByName,
} from '@delegate/core';
import { type ToolCallHooks, runToolUses } from '../query/run-tools.js';

/**
 * What happens to the tool calls that were in flight when a conversation was cut (it ends
 * with an assistant message whose tool calls have no results): `interrupt` gives each one a
 * result saying it was interrupted; `rerun-read-only` runs the read-only ones again and gives
 * the others that result, so nothing that may have acted is done twice behind the model's back.
 */
export type InFlightToolCalls = 'interrupt' | 'rerun-read-only';

/**
 * Throws an `INVALID_ARGUMENT` error naming `where` unless `value` is undefined or an
 * {@link InFlightToolCalls} mode.
 */
export function checkInFlightToolCalls(value: unknown, where: string): void {
  if (value === undefined || value === 'interrupt' || value === 'rerun-read-only') return;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${where} must be 'interrupt' or 'rerun-read-only', got ${JSON.stringify(value)}.`,
  );
}

/** How the in-flight tool calls of a conversation were settled. */
export type SettledToolCalls = {
  /** Names of the calls run again (read-only ones, with `rerun-read-only`). */
  rerun: string[];
  /** Names of the calls given the interrupted result. */
  interrupted: string[];
  /** Names of the calls given a result known from elsewhere (`results`). */
  recovered: string[];
};

/** Options of {@link settleInFlightToolCalls}. */
export type SettleInFlightToolCallsOptions = {
  /** The agent's conversation (only read). */
  messages: readonly Message[];
  /** What to do with the calls. */
  mode: InFlightToolCalls;
  /** The agent's own context: its tools, cwd, permission mode and abort signal. */
  context: ToolUseContext;
  /** The agent's own permission check. */
  canUseTool: CanUseTool;
  /** The agent's hooks around tool calls. */
  hooks?: ToolCallHooks;
  /** Applied to the text of every result of a call run again or recovered (removes secrets). */
  redact?: (text: string) => string;
  /**
   * Results known from elsewhere, by tool call id: an Agent call whose agent finished before
   * the cut, its report read back from the agent's transcript. Such a call gets that text as
   * its result instead of being run again or interrupted.
   */
  results?: Readonly<Record<string, string>>;
};

/** Result text of a call that was in flight: it may or may not have taken effect. */
export const IN_FLIGHT_CALL_TEXT =
  'Interrupted: the run stopped before this call finished, so whether it took effect is unknown. Check before calling it again.';

/** Result text of an in-flight call of an agent or task tool (never run again). */
export const IN_FLIGHT_AGENT_CALL_TEXT =
  'Interrupted: the run stopped while this call was in flight. Calls about agents and tasks are not run again: an agent it started may be resumed on its own from its last finished turn and report when it finishes, so do not start it again.';

/**
 * Tools about agents, tasks and the user. Some call themselves read-only, but running one
 * again would start work twice (the agents of a run are resumed on their own) or ask the
 * user again.
 */
const NEVER_RERUN = new Set<string>([
  TOOL_NAMES.agent,
  TOOL_NAMES.agentLegacy,
  TOOL_NAMES.sendMessage,
  TOOL_NAMES.taskOutput,
  TOOL_NAMES.taskStop,
  TOOL_NAMES.taskCreate,
  TOOL_NAMES.taskGet,
  TOOL_NAMES.taskList,
  TOOL_NAMES.taskUpdate,
  TOOL_NAMES.askUserQuestion,
  TOOL_NAMES.exitPlanMode,
  TOOL_NAMES.skill,
]);

/**
 * The last assistant message and its tool calls, when the conversation ends with it (the
 * calls have no results yet); undefined otherwise.
 */
export function findInFlightToolCalls(
  messages: readonly Message[],
): { assistant: AssistantMessage; calls: ToolUseBlock[] } | undefined {
  const last = messages
    .filter((message) => message.type === 'user' || message.type === 'assistant')
    .at(-1);
  if (last?.type !== 'assistant') return undefined;
  const calls = last.message.content.filter(
    (block): block is ToolUseBlock => block.type === 'tool_use',
  );
  return calls.length > 0 ? { assistant: last, calls } : undefined;
}

/** True when running `call` again cannot change anything: a read-only tool, valid input. */
function isRerunnable(call: ToolUseBlock, context: ToolUseContext): boolean {
  if (NEVER_RERUN.has(call.name)) return false;
  const tool = findToolByName(context.options.tools, call.name);
  const parsed = tool?.inputSchema.safeParse(call.input);
  if (!tool || !parsed?.success) return false;
  try {
    return tool.isReadOnly(parsed.data);
  } catch {
    return false;
  }
}

function interruptedResult(call: ToolUseBlock): ToolResultBlock {
  return {
    type: 'tool_result',
    tool_use_id: call.id,
    content: [
      {
        type: 'text',
        text: NEVER_RERUN.has(call.name) ? IN_FLIGHT_AGENT_CALL_TEXT : IN_FLIGHT_CALL_TEXT,
      },
    ],
    is_error: true,
  };
}

/**
 * Settles the tool calls a conversation left in flight (see {@link InFlightToolCalls}):
 * returns the messages to add to the conversation before its next request (first the user
 * message that holds one result per call, in call order, then any a re-run tool added), or
 * undefined when nothing was in flight. Calls run
 * again go through the agent's own tools, permission check and hooks; agent and task tools
 * are never run again, and a call whose input does not parse counts as not read-only.
 */
export async function settleInFlightToolCalls(
  options: SettleInFlightToolCallsOptions,
): Promise<(SettledToolCalls & { messages: [UserMessage, ...Message[]] }) | undefined> {
  checkInFlightToolCalls(options.mode, 'settleInFlightToolCalls: mode');
  const inFlight = findInFlightToolCalls(options.messages);
  if (!inFlight) return undefined;
  const { context } = options;
  const known = options.results ?? {};
  const recovered = inFlight.calls.filter((call) => Object.hasOwn(known, call.id));
  const rerun =
    options.mode === 'rerun-read-only'
      ? inFlight.calls.filter((call) => !recovered.includes(call) && isRerunnable(call, context))
      : [];
  const results = new Map<string, ToolResultBlock>();
  for (const call of recovered) {
    const text = known[call.id] ?? '';
    results.set(call.id, {
      type: 'tool_result',
      tool_use_id: call.id,
      content: [{ type: 'text', text: options.redact ? options.redact(text) : text }],
    });
  }
  const extraMessages: Message[] = [];
  if (rerun.length > 0) {
    for await (const update of runToolUses({
      toolUses: rerun,
      assistantMessage: inFlight.assistant,
      context,
      canUseTool: options.canUseTool,
      maxConcurrency: 4,
      ...(options.hooks ? { hooks: options.hooks } : {}),
      ...(options.redact ? { redact: options.redact } : {}),
    }))
      if (update.type === 'result') {
        results.set(update.result.tool_use_id, update.result);
        extraMessages.push(...update.newMessages);
      }
  }
  const interrupted = inFlight.calls.filter(
    (call) => !rerun.includes(call) && !recovered.includes(call),
  );
  for (const call of interrupted) results.set(call.id, interruptedResult(call));
  const message = createUserMessage({
    content: inFlight.calls.map((call) => results.get(call.id) ?? interruptedResult(call)),
    ...(context.agentId ? { agentId: context.agentId } : {}),
  });
  return {
    messages: [message, ...extraMessages],
    rerun: rerun.map((call) => call.name),
    interrupted: interrupted.map((call) => call.name),
    recovered: recovered.map((call) => call.name),
  };
}
