import {
  type AssistantMessage,
  type CanUseTool,
  type Message,
  type ProgressMessage,
  type Tool,
  type ToolResult,
  type ToolResultBlock,
  type ToolUseBlock,
  type ToolUseContext,
  DelegateError,
  createUuid,
  errorMessage,
  findToolByName,
  timerDelay,
} from '@delegate/core';
import { AsyncChannel } from '../util/async-channel.js';
import { redactValue } from '../util/redact-secrets.js';

/** Text of the result recorded for a tool call the abort signal interrupted. */
export const INTERRUPTED_TOOL_RESULT =
  'Interrupted: the run was aborted before this tool call finished.';

/** One update from `runToolUses`: progress of a call, or the final result of one. */
export type ToolRunUpdate =
  | { type: 'progress'; message: ProgressMessage }
  | { type: 'result'; result: ToolResultBlock; newMessages: Message[] };

/** One tool call as hooks see it. */
export type ToolCallInfo = {
  /** Name of the tool. */
  toolName: string;
  /** Id of the `tool_use` block. */
  toolUseId: string;
  /** The validated (and possibly permission-updated) input. */
  input: unknown;
  /** The calling agent's context. */
  context: ToolUseContext;
};

/** Hooks around each approved tool call of one agent. */
export type ToolCallHooks = {
  /** Runs before the call; a returned reason blocks it (the model gets the reason as the result). */
  beforeToolCall?: (call: ToolCallInfo) => Promise<string | undefined>;
  /** Runs after the call; returned text is added to the result for the model. */
  afterToolCall?: (call: ToolCallInfo & { result: ToolResultBlock }) => Promise<string | undefined>;
};

type Call = { block: ToolUseBlock; tool: Tool | undefined; concurrencySafe: boolean };
type Outcome = { result: ToolResultBlock; newMessages: Message[] };
type RunOneOptions = {
  call: Call;
  context: ToolUseContext;
  canUseTool: CanUseTool;
  assistantMessage: AssistantMessage;
  hooks: ToolCallHooks | undefined;
  onProgress: (data: unknown) => void;
};

function errorOutcome(id: string, text: string): Outcome {
  return {
    result: {
      type: 'tool_result',
      tool_use_id: id,
      content: [{ type: 'text', text }],
      is_error: true,
    },
    newMessages: [],
  };
}

function toResultBlock(id: string, result: ToolResult): ToolResultBlock {
  const content =
    typeof result.content === 'string'
      ? [{ type: 'text' as const, text: result.content }].filter((block) => block.text.length > 0)
      : result.content;
  const block: ToolResultBlock = {
    type: 'tool_result',
    tool_use_id: id,
    content: content.length > 0 ? content : [{ type: 'text', text: '(no output)' }],
  };
  if (result.isError) block.is_error = true;
  return block;
}

function safeTrait(fn: () => boolean): boolean {
  try {
    return fn();
  } catch {
    return false;
  }
}

/** Splits calls into batches: runs of concurrency-safe calls, and single unsafe calls. */
function partition(calls: Call[]): Call[][] {
  const batches: Call[][] = [];
  for (const call of calls) {
    const last = batches[batches.length - 1];
    if (call.concurrencySafe && last?.[0]?.concurrencySafe) last.push(call);
    else batches.push([call]);
  }
  return batches;
}

/** The tool and its parsed input, or the error result that ends the call before it starts. */
/** True for the input the stream accumulator keeps when a call's JSON does not parse (cut off or malformed). */
function isCutOffInput(input: unknown): boolean {
  return typeof input === 'object' && input !== null && '__invalid_json__' in input;
}

function validateCall(options: RunOneOptions): { tool: Tool; input: unknown } | Outcome {
  const { call, context } = options;
  const id = call.block.id;
  const tool = call.tool;
  if (!tool) {
    const names = context.options.tools.map((candidate) => candidate.name).join(', ');
    return errorOutcome(
      id,
      `No tool named "${call.block.name}" is available to this agent. Available tools: ${names || 'none'}.`,
    );
  }
  if (context.abortController.signal.aborted) return errorOutcome(id, INTERRUPTED_TOOL_RESULT);
  if (isCutOffInput(call.block.input)) {
    // A response that stopped at its output limit cut the call; any other sent malformed JSON.
    return errorOutcome(
      id,
      options.assistantMessage.message.stop_reason === 'max_tokens'
        ? `The input of this ${tool.name} call is not complete JSON: the response was cut off at its output token limit while writing it, so the call was not run. Write a shorter input, or split the work over several calls.`
        : `The input of this ${tool.name} call is not valid JSON, so the call was not run. Call it again with the input as one JSON object.`,
    );
  }
  const parsed = tool.inputSchema.safeParse(call.block.input);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`)
      .join('; ');
    return errorOutcome(id, `Invalid input for ${tool.name}: ${issues}`);
  }
  return { tool, input: parsed.data };
}

/** The input to run with after the permission check, or the error result of a refusal. */
async function checkPermission(
  options: RunOneOptions,
  tool: Tool,
  input: unknown,
): Promise<{ input: unknown } | Outcome> {
  const { context } = options;
  const id = options.call.block.id;
  let decision;
  try {
    decision = await options.canUseTool(tool, input, context, options.assistantMessage, id);
  } catch (error) {
    return errorOutcome(id, `${tool.name}: the permission check failed: ${errorMessage(error)}`);
  }
  // The run may have been aborted while a question was open.
  if (context.abortController.signal.aborted) return errorOutcome(id, INTERRUPTED_TOOL_RESULT);
  if (decision.behavior !== 'allow')
    return errorOutcome(id, `Permission denied: ${decision.message}`);
  return { input: decision.updatedInput !== undefined ? decision.updatedInput : input };
}

/** Text of the result of a call that ran past its tool's `timeoutMs`. */
export function toolTimeoutText(toolName: string, timeoutMs: number): string {
  return `${toolName} did not finish within its timeout of ${timeoutMs} ms and was stopped. Try a smaller input, or another way to get the same result.`;
}

/**
 * Runs `tool.call`, bounded by the tool's `timeoutMs` when it has one: past it, the call's
 * own abort signal fires (the agent's stays untouched) and the call ends as timed out.
 */
async function callWithTimeout(
  options: RunOneOptions,
  tool: Tool,
  input: unknown,
): Promise<ToolResult | 'timed_out'> {
  const { context } = options;
  const extras = {
    toolUseId: options.call.block.id,
    assistantMessage: options.assistantMessage,
    canUseTool: options.canUseTool,
    onProgress: options.onProgress,
  };
  const timeoutMs = tool.timeoutMs;
  // Infinity is no limit; Node would run such a timer (or one past 2^31 - 1 ms) after 1 ms.
  const delay =
    timeoutMs === undefined ? undefined : timerDelay(timeoutMs, `tool ${tool.name}: timeoutMs`);
  if (timeoutMs === undefined || delay === undefined) return tool.call(input, context, extras);
  const controller = new AbortController();
  const parentSignal = context.abortController.signal;
  const forward = (): void => controller.abort(parentSignal.reason);
  parentSignal.addEventListener('abort', forward, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timed_out'>((resolve) => {
    timer = setTimeout(() => {
      // Settled first, so the race ends as a timeout even when the call rejects on the abort.
      resolve('timed_out');
      controller.abort(new DelegateError('TOOL_FAILED', toolTimeoutText(tool.name, timeoutMs)));
    }, delay);
  });
  try {
    const call = tool.call(input, { ...context, abortController: controller }, extras);
    // A call that ignores its signal is left behind; its late rejection is not reported.
    call.catch(() => undefined);
    return await Promise.race([call, timedOut]);
  } finally {
    clearTimeout(timer);
    parentSignal.removeEventListener('abort', forward);
  }
}

async function invokeTool(options: RunOneOptions, tool: Tool, input: unknown): Promise<Outcome> {
  const { context } = options;
  const id = options.call.block.id;
  try {
    const result = await callWithTimeout(options, tool, input);
    if (result === 'timed_out')
      return errorOutcome(id, toolTimeoutText(tool.name, tool.timeoutMs ?? 0));
    return { result: toResultBlock(id, result), newMessages: result.newMessages ?? [] };
  } catch (error) {
    if (context.abortController.signal.aborted) return errorOutcome(id, INTERRUPTED_TOOL_RESULT);
    const text = DelegateError.isInstance(error)
      ? error.message
      : `${tool.name} failed: ${errorMessage(error)}`;
    return errorOutcome(id, text);
  }
}

function withFeedback(outcome: Outcome, feedback: string): Outcome {
  const content = outcome.result.content ?? [];
  const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return {
    ...outcome,
    result: { ...outcome.result, content: [...blocks, { type: 'text', text: feedback }] },
  };
}

/** One call: validate, check permission, PreToolUse hooks, run, PostToolUse hooks. */
async function runOne(options: RunOneOptions): Promise<Outcome> {
  const { context, hooks } = options;
  const id = options.call.block.id;
  const validated = validateCall(options);
  if ('result' in validated) return validated;
  const { tool } = validated;
  const permitted = await checkPermission(options, tool, validated.input);
  if ('result' in permitted) return permitted;
  const info: ToolCallInfo = {
    toolName: tool.name,
    toolUseId: id,
    input: permitted.input,
    context,
  };
  const blocked = await hooks?.beforeToolCall?.(info);
  if (blocked !== undefined) return errorOutcome(id, blocked);
  context.emit?.({
    type: 'agent.tool_use',
    agentId: context.agentId ?? 'main',
    timestamp: new Date().toISOString(),
    toolName: tool.name,
    toolUseId: id,
    input: permitted.input,
  });
  const outcome = await invokeTool(options, tool, permitted.input);
  const feedback = await hooks?.afterToolCall?.({ ...info, result: outcome.result });
  return feedback === undefined ? outcome : withFeedback(outcome, feedback);
}

function progressMessage(
  context: ToolUseContext,
  toolUseId: string,
  data: unknown,
): ProgressMessage {
  return {
    type: 'progress',
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    toolUseId,
    data,
    ...(context.agentId ? { agentId: context.agentId } : {}),
  };
}

/**
 * Runs the tool calls of one assistant message: runs of concurrency-safe calls in
 * parallel (up to `maxConcurrency`), other calls one at a time in order. Yields progress
 * as it happens and results in the order of the calls. `hooks` run around each approved call.
 */
export async function* runToolUses(options: {
  toolUses: readonly ToolUseBlock[];
  assistantMessage: AssistantMessage;
  context: ToolUseContext;
  canUseTool: CanUseTool;
  maxConcurrency: number;
  hooks?: ToolCallHooks;
  /**
   * Applied to the text of every result before it is yielded (and so before the model, the
   * transcript or an event sees it): the query loop removes the API key with it.
   */
  redact?: (text: string) => string;
  /** Longest result text passed on; the rest is cut with a note (default `DEFAULT_MAX_TOOL_RESULT_CHARS`). */
  maxResultChars?: number;
  /**
   * Called when the consumer stops reading while calls still run (a `break`, a `return()`):
   * it should abort the signal they run under. The generator then waits for them to end, up
   * to `INTERRUPT_GRACE_MS`, before it closes.
   */
  interrupt?: () => void;
}): AsyncGenerator<ToolRunUpdate> {
  const { context } = options;
  const calls: Call[] = options.toolUses.map((block) => {
    const tool = findToolByName(context.options.tools, block.name);
    const parsed = tool?.inputSchema.safeParse(block.input);
    const concurrencySafe =
      tool && parsed?.success ? safeTrait(() => tool.isConcurrencySafe(parsed.data)) : false;
    return { block, tool, concurrencySafe };
  });
  for (const batch of partition(calls)) yield* runBatch(options, batch);
}

async function* runBatch(
  options: Parameters<typeof runToolUses>[0],
  batch: Call[],
): AsyncGenerator<ToolRunUpdate> {
  const { context } = options;
  const channel = new AsyncChannel<ToolRunUpdate>();
  const results: Array<Outcome | undefined> = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < batch.length) {
      const index = next++;
      const call = batch[index]!;
      results[index] = await runOne({
        call,
        context,
        canUseTool: options.canUseTool,
        assistantMessage: options.assistantMessage,
        hooks: options.hooks,
        onProgress: (data) =>
          channel.push({
            type: 'progress',
            // What a tool reports reaches events and the transcript: no credential in it either.
            message: progressMessage(
              context,
              call.block.id,
              options.redact ? redactValue(data, options.redact) : data,
            ),
          }),
      });
    }
  };
  const workers = Array.from(
    { length: Math.max(1, Math.min(options.maxConcurrency, batch.length)) },
    worker,
  );
  // runOne never rejects on purpose; allSettled keeps one unexpected failure from
  // closing the channel while sibling calls still run.
  const settled = Promise.allSettled(workers);
  void settled.then(() => channel.close());
  let drained = false;
  try {
    for await (const update of channel) yield update;
    drained = true;
  } finally {
    // The consumer stopped reading while calls ran: stop them rather than leave them running.
    if (!drained && options.interrupt) {
      options.interrupt();
      await settledWithin(settled, INTERRUPT_GRACE_MS);
    }
  }
  for (let index = 0; index < batch.length; index++) {
    const outcome =
      results[index] ??
      errorOutcome(
        batch[index]!.block.id,
        context.abortController.signal.aborted
          ? INTERRUPTED_TOOL_RESULT
          : 'The tool call failed unexpectedly before it returned a result.',
      );
    yield {
      type: 'result',
      ...capped(
        redacted(outcome, options.redact),
        options.maxResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS,
      ),
    };
  }
}

/**
 * How long a tool batch whose consumer stopped reading waits for its interrupted calls to
 * end (a killed shell, a sub-agent's stream) before it lets the consumer go on; a call that
 * ignores its abort signal is left behind after that.
 */
export const INTERRUPT_GRACE_MS = 5_000;

async function settledWithin(settled: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Longest text of one tool result sent on (400,000 characters, about 100,000 tokens): above
 * what the built-in tools return by default, and far below what one request can carry. A
 * longer result (a custom tool's) is cut with a note; sent whole it could fail the request,
 * and every later one that resends it.
 */
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 400_000;

function cutNote(cut: number, max: number): string {
  return `[… ${cut} more characters of this tool result were cut: one result is passed on up to ${max} characters.]`;
}

function capped(outcome: Outcome, max: number): Outcome {
  const content = outcome.result.content;
  if (content === undefined || typeof content === 'string') return outcome;
  const total = content.reduce(
    (sum, block) => sum + (block.type === 'text' ? block.text.length : 0),
    0,
  );
  if (total <= max) return outcome;
  let left = max;
  const blocks = content
    .map((block) => {
      if (block.type !== 'text') return block;
      const kept = block.text.slice(0, Math.max(0, left));
      left -= kept.length;
      return { ...block, text: kept };
    })
    // The API refuses an empty text block.
    .filter((block) => block.type !== 'text' || block.text.length > 0);
  blocks.push({ type: 'text', text: cutNote(total - max, max) });
  return { ...outcome, result: { ...outcome.result, content: blocks } };
}

function redacted(outcome: Outcome, redact: ((text: string) => string) | undefined): Outcome {
  const content = outcome.result.content;
  if (redact === undefined || content === undefined) return outcome;
  return {
    ...outcome,
    result: {
      ...outcome.result,
      content:
        typeof content === 'string'
          ? redact(content)
          : content.map((block) =>
              block.type === 'text' ? { ...block, text: redact(block.text) } : block,
            ),
    },
  };
}
