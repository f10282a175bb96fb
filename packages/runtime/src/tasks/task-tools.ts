import {
  type TaskState,
  type Tool,
  type ToolResult,
  type ToolUseContext,
  TOOL_NAMES,
} from '@delegate/core';
import { loadTools } from '../util/load-tools.js';
import { escapeNotificationField, escapeNotificationText } from './task-notification.js';
import { z } from 'zod';
import type { AgentRuntime } from '../session/agent-runtime.js';

const TaskOutputInput = z.object({
  task_id: z
    .string()
    .min(1)
    .describe('Id of the task (from the Agent tool result or a notification)'),
  block: z.boolean().optional().describe('Wait for the task to finish (default true)'),
  timeout: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .optional()
    .describe('Longest wait in milliseconds (default 30000)'),
});
type TaskOutputInput = z.infer<typeof TaskOutputInput>;

const TaskStopInput = z.object({
  task_id: z.string().min(1).describe('Id of the task to stop'),
});
type TaskStopInput = z.infer<typeof TaskStopInput>;

/** A background shell started by a Bash tool: a session task of type `local_bash`, or only in the root state. */
function findShellTask(
  runtime: AgentRuntime,
  context: ToolUseContext,
  taskId: string,
): TaskState | undefined {
  const registered = runtime.tasks.get(taskId);
  if (registered) return registered.type === 'local_bash' ? registered : undefined;
  return context.getAppState().tasks[taskId];
}

/** Renders a task's state for the model. */
export function describeTask(task: TaskState): string {
  const lines = [
    `task_id: ${task.id}`,
    `status: ${task.status}`,
    `description: ${escapeNotificationField(task.description)}`,
    ...(task.agentId ? [`agent_id: ${task.agentId}`] : []),
    ...(task.toolUseCount !== undefined ? [`tool_uses: ${task.toolUseCount}`] : []),
    ...(task.lastActivity && task.status === 'running'
      ? [`last_activity: ${escapeNotificationField(task.lastActivity)}`]
      : []),
    ...(task.endTime ? [`duration_ms: ${task.endTime - task.startTime}`] : []),
  ];
  // Escaped as in a notification: a result must not read as a <task-notification>.
  if (task.error) lines.push(`error: ${escapeNotificationText(task.error)}`);
  if (task.result !== undefined) lines.push('result:', escapeNotificationText(task.result));
  return lines.join('\n');
}

/** Creates `TaskOutput` bound to a session's runtime: read a task's result, waiting for it by default. */
export function createTaskOutputTool(runtime: AgentRuntime): Tool<TaskOutputInput, TaskState> {
  return {
    name: TOOL_NAMES.taskOutput,
    inputSchema: TaskOutputInput,
    description: () =>
      'Read the status and result of a background task. By default it waits (up to `timeout` ms) for the task to finish. Prefer waiting for the <task-notification>; use this only when you have nothing else to do.',
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,
    async call(input, context): Promise<ToolResult<TaskState>> {
      const timeoutMs = input.timeout ?? 30_000;
      const signal = context.abortController.signal;
      const shell = findShellTask(runtime, context, input.task_id);
      if (shell)
        return describeShellTask({
          context,
          taskId: shell.id,
          timeoutMs: input.block === false ? 0 : timeoutMs,
          signal,
        });
      const task =
        input.block === false
          ? runtime.tasks.require(input.task_id)
          : await runtime.tasks.waitFor(input.task_id, { timeoutMs, signal });
      const note =
        task.status === 'running' ? '\n(still running; wait for its <task-notification>)' : '';
      return {
        content: describeTask(task) + note,
        data: { ...task },
        isError: task.status === 'failed',
      };
    },
  };
}

/** Creates `TaskStop` bound to a session's runtime: stop a running task (an agent or a background shell). */
export function createTaskStopTool(runtime: AgentRuntime): Tool<TaskStopInput, TaskState> {
  return {
    name: TOOL_NAMES.taskStop,
    inputSchema: TaskStopInput,
    description: () => 'Stop a running background task (an agent or a shell command) by its id.',
    // It changes nothing of the user's: it ends work of this session, as `Agent` (read-only
    // too) starts it, so no permission mode asks for it (plan mode included).
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,
    async call(input, context): Promise<ToolResult<TaskState>> {
      const shell = findShellTask(runtime, context, input.task_id);
      if (shell) {
        if (shell.status === 'running') shell.kill?.();
        return describeShellTask({
          context,
          taskId: shell.id,
          timeoutMs: 5_000,
          signal: context.abortController.signal,
        });
      }
      const task = runtime.tasks.require(input.task_id);
      if (task.status !== 'running') {
        return {
          content: `Task ${task.id} is not running (status: ${task.status}).`,
          data: { ...task },
        };
      }
      task.kill?.();
      await runtime.tasks.waitFor(task.id, { timeoutMs: 5_000 });
      return { content: `Stopped task ${task.id}.\n${describeTask(task)}`, data: { ...task } };
    },
  };
}

/** Waits (up to `timeoutMs`) for a background shell to end and describes it with its output. */
async function describeShellTask(options: {
  context: ToolUseContext;
  taskId: string;
  timeoutMs: number;
  signal: AbortSignal;
}): Promise<ToolResult<TaskState>> {
  const { context, taskId, timeoutMs, signal } = options;
  const deadline = Date.now() + timeoutMs;
  let task = context.getAppState().tasks[taskId]!;
  while (task.status === 'running' && Date.now() < deadline && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    task = context.getAppState().tasks[taskId] ?? task;
  }
  const { getBackgroundShellOutput } = await loadTools();
  const output = await getBackgroundShellOutput(taskId);
  const text = [
    describeTask(task),
    'output:',
    output
      ? output.output +
        (output.cutBytes > 0 ? `\n(${output.cutBytes} bytes cut from the middle)` : '')
      : '(no output recorded)',
  ].join('\n');
  return { content: text, data: { ...task }, isError: task.status === 'failed' };
}
