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
} from '@delegate/core';
import { AsyncChannel } from '../util/async-channel.js';

/** Text of the result recorded for a tool call the abort signal interrupted. */
export const INTERRUPTED_TOOL_RESULT =
  'Interrupted: the run was aborted before this tool call finished.';

/** One update from `runToolUses`: progress of a call, or the final result of one. */
export type ToolRunUpdate =
  | { type: 'progress'; message: ProgressMessage }
  | { type: 'result'; result: ToolResultBlock; newMessages: Message[] };

type Call = { block: ToolUseBlock; tool: Tool | undefined; concurrencySafe: boolean };

function errorResult(id: string, text: string): ToolResultBlock {
  return {
    type: 'tool_result',
    tool_use_id: id,
    content: [{ type: 'text', text }],
    is_error: true,
  };
}

function toResultBlock(id: string, result: ToolResult): ToolResultBlock {
  const content =
    typeof result.content === 'string'
      ? [
          {
            type: 'text' as const,
            text: result.content.length > 0 ? result.content : '(no output)',
          },
        ]
      : result.content.length > 0
        ? result.content
        : [{ type: 'text' as const, text: '(no output)' }];
  const block: ToolResultBlock = { type: 'tool_result', tool_use_id: id, content };
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

async function runOne(options: {
  call: Call;
  context: ToolUseContext;
  canUseTool: CanUseTool;
  assistantMessage: AssistantMessage;
  onProgress: (data: unknown) => void;
}): Promise<{ result: ToolResultBlock; newMessages: Message[] }> {
  const { call, context } = options;
  const id = call.block.id;
  const tool = call.tool;
  if (!tool) {
    const names = context.options.tools.map((candidate) => candidate.name).join(', ');
    return {
      result: errorResult(
        id,
        `No tool named "${call.block.name}" is available to this agent. Available tools: ${names || 'none'}.`,
      ),
      newMessages: [],
    };
  }
  if (context.abortController.signal.aborted)
    return { result: errorResult(id, INTERRUPTED_TOOL_RESULT), newMessages: [] };
  const parsed = tool.inputSchema.safeParse(call.block.input);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`)
      .join('; ');
    return {
      result: errorResult(id, `Invalid input for ${tool.name}: ${issues}`),
      newMessages: [],
    };
  }
  let input: unknown = parsed.data;
  let decision;
  try {
    decision = await options.canUseTool(tool, input, context, options.assistantMessage, id);
  } catch (error) {
    return {
      result: errorResult(id, `${tool.name}: the permission check failed: ${errorMessage(error)}`),
      newMessages: [],
    };
  }
  // The run may have been aborted while a question was open.
  if (context.abortController.signal.aborted)
    return { result: errorResult(id, INTERRUPTED_TOOL_RESULT), newMessages: [] };
  if (decision.behavior !== 'allow') {
    return { result: errorResult(id, `Permission denied: ${decision.message}`), newMessages: [] };
  }
  if (decision.updatedInput !== undefined) input = decision.updatedInput;
  context.emit?.({
    type: 'agent.tool_use',
    agentId: context.agentId ?? 'main',
    timestamp: new Date().toISOString(),
    toolName: tool.name,
    toolUseId: id,
    input,
  });
  try {
    const result = await tool.call(input, context, {
      toolUseId: id,
      assistantMessage: options.assistantMessage,
      canUseTool: options.canUseTool,
      onProgress: options.onProgress,
    });
    return { result: toResultBlock(id, result), newMessages: result.newMessages ?? [] };
  } catch (error) {
    if (context.abortController.signal.aborted)
      return { result: errorResult(id, INTERRUPTED_TOOL_RESULT), newMessages: [] };
    const text = DelegateError.isInstance(error)
      ? error.message
      : `${tool.name} failed: ${errorMessage(error)}`;
    return { result: errorResult(id, text), newMessages: [] };
  }
}

/**
 * Runs the tool calls of one assistant message: runs of concurrency-safe calls in
 * parallel (up to `maxConcurrency`), other calls one at a time in order. Yields progress
 * as it happens and results in the order of the calls.
 */
export async function* runToolUses(options: {
  toolUses: readonly ToolUseBlock[];
  assistantMessage: AssistantMessage;
  context: ToolUseContext;
  canUseTool: CanUseTool;
  maxConcurrency: number;
}): AsyncGenerator<ToolRunUpdate> {
  const { context } = options;
  const calls: Call[] = options.toolUses.map((block) => {
    const tool = findToolByName(context.options.tools, block.name);
    const parsed = tool?.inputSchema.safeParse(block.input);
    const concurrencySafe =
      tool && parsed?.success ? safeTrait(() => tool.isConcurrencySafe(parsed.data)) : false;
    return { block, tool, concurrencySafe };
  });

  for (const batch of partition(calls)) {
    const channel = new AsyncChannel<ToolRunUpdate>();
    const results: Array<{ result: ToolResultBlock; newMessages: Message[] } | undefined> = [];
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
          onProgress: (data) =>
            channel.push({
              type: 'progress',
              message: {
                type: 'progress',
                uuid: createUuid(),
                timestamp: new Date().toISOString(),
                toolUseId: call.block.id,
                data,
                ...(context.agentId ? { agentId: context.agentId } : {}),
              },
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
    void Promise.allSettled(workers).then(() => channel.close());
    for await (const update of channel) yield update;
    for (let index = 0; index < batch.length; index++) {
      const outcome = results[index] ?? {
        result: errorResult(
          batch[index]!.block.id,
          context.abortController.signal.aborted
            ? INTERRUPTED_TOOL_RESULT
            : 'The tool call failed unexpectedly before it returned a result.',
        ),
        newMessages: [],
      };
      yield { type: 'result', ...outcome };
    }
  }
}
