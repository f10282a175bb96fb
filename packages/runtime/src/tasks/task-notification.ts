import type { CompleteUsage, TaskStatus } from '@delegate/core';

/** What a `<task-notification>` says about a finished task. */
export type TaskNotification = {
  /** The task that ended. */
  taskId: string;
  /** Its agent, for agent tasks. */
  agentId?: string;
  /** How it ended. */
  status: Exclude<TaskStatus, 'running'>;
  /** Short description given when it started. */
  description: string;
  /** The report (or what there was of it). */
  result?: string;
  /** Why it failed or was stopped. */
  error?: string;
  /** Usage of a completed run. */
  usage?: CompleteUsage;
  /** Tool calls of a completed run. */
  toolUseCount?: number;
  /** Duration of a completed run. */
  durationMs?: number;
  /** The worktree it left, when it changed something. */
  worktree?: { path: string; branch?: string };
};

function escape(text: string): string {
  // Keep the wrapper parseable: a result quoting the closing tag must not end it early.
  return text.replace(/<\/task-notification>/g, '<\\/task-notification>');
}

/** Renders the message a parent sees in its next turn when a task ends. */
export function formatTaskNotification(notification: TaskNotification): string {
  const verb =
    notification.status === 'completed'
      ? 'finished'
      : notification.status === 'failed'
        ? 'failed'
        : 'was stopped';
  const lines = [
    '<task-notification>',
    `task-id: ${notification.taskId}`,
    ...(notification.agentId ? [`agent-id: ${notification.agentId}`] : []),
    `status: ${notification.status}`,
    `summary: Background agent "${notification.description}" ${verb}.`,
  ];
  if (notification.error) lines.push(`error: ${escape(notification.error)}`);
  if (notification.result !== undefined) lines.push('result:', escape(notification.result));
  if (notification.worktree) {
    lines.push(
      `worktree: ${notification.worktree.path}${notification.worktree.branch ? ` (branch ${notification.worktree.branch})` : ''}`,
    );
  }
  if (notification.usage) {
    const usage = notification.usage;
    lines.push(
      `usage: input_tokens=${usage.input_tokens} output_tokens=${usage.output_tokens} cache_read_input_tokens=${usage.cache_read_input_tokens} cache_creation_input_tokens=${usage.cache_creation_input_tokens}` +
        (notification.toolUseCount !== undefined ? ` tool_uses=${notification.toolUseCount}` : '') +
        (notification.durationMs !== undefined ? ` duration_ms=${notification.durationMs}` : ''),
    );
  }
  lines.push('</task-notification>');
  return lines.join('\n');
}

/** Extracts the task ids of the notifications in a text (for tests and UIs). */
export function parseTaskNotificationIds(text: string): string[] {
  return [...text.matchAll(/<task-notification>\ntask-id: (\S+)/g)].map((match) => match[1]!);
}
