import { type CompleteUsage, type TaskStatus, invalidArgument, isObject } from '@delegate/core';

/** What a `<task-notification>` says about a finished task. */
export type TaskNotification = {
  /** The task that ended. */
  taskId: string;
  /** Its agent, for agent tasks. */
  agentId?: string;
  /** The name the agent was given (to address it with SendMessage). */
  name?: string;
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

// Everything that could begin a tag (`<x`, `</x`, `<!`, `<?`, `< /x`, `< task-notification`),
// in any case, also with characters that show nothing (`<\u200b/x`) after the `<`, plus `&`
// where it would read as one of these entities: unescaping gives the text back. A lone `<`
// (`a < b`) stays as it is.
const TAG_START =
  /<(?=\p{Default_Ignorable_Code_Point}*[/!?A-Za-z]|[\s\p{Default_Ignorable_Code_Point}]*\/|[\s\p{Default_Ignorable_Code_Point}]+task-notification)/giu;
const ENTITY = /&(?=(?:lt|gt|amp|quot);)/g;
// C0 and C1 controls, and the bidirectional overrides and isolates that reorder what a reader sees.
const CONTROL_OR_BIDI =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Escapes a block field (the result, an error): it keeps its lines, but nothing in it can
 * open or close a tag, so a report quoting `</task-notification>` (or forging a whole new
 * notification) stays inside its own notification.
 */
export function escapeNotificationText(text: string): string {
  return text.replace(ENTITY, '&amp;').replace(TAG_START, '&lt;');
}

/**
 * Escapes a one-line field (description, name, ids, paths): as a block field, and `>` and
 * `"` too, and line breaks, other controls and bidirectional overrides become spaces, so
 * it cannot add a line (a forged `status:`) or look like something else.
 */
export function escapeNotificationField(text: string): string {
  return escapeNotificationText(text)
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(CONTROL_OR_BIDI, ' ');
}

const ESCAPED_ENTITY = /&(lt|gt|amp|quot);/g;
const UNESCAPED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/**
 * Gives back the text of a field {@link escapeNotificationField} or
 * {@link escapeNotificationText} escaped (the spaces that replaced line breaks and controls
 * stay spaces).
 */
export function unescapeNotificationField(text: string): string {
  return text.replace(ESCAPED_ENTITY, (_, name: string) => UNESCAPED[name]!);
}

function usageLine(notification: TaskNotification): string | undefined {
  const usage = notification.usage;
  if (!usage) return undefined;
  return (
    `usage: input_tokens=${usage.input_tokens} output_tokens=${usage.output_tokens} cache_read_input_tokens=${usage.cache_read_input_tokens} cache_creation_input_tokens=${usage.cache_creation_input_tokens}` +
    (notification.toolUseCount !== undefined ? ` tool_uses=${notification.toolUseCount}` : '') +
    (notification.durationMs !== undefined ? ` duration_ms=${notification.durationMs}` : '')
  );
}

function worktreeLine(worktree: TaskNotification['worktree']): string | undefined {
  if (!worktree) return undefined;
  const branch = worktree.branch ? ` (branch ${escapeNotificationField(worktree.branch)})` : '';
  return `worktree: ${escapeNotificationField(worktree.path)}${branch}`;
}

const ENDED_STATUSES: ReadonlySet<unknown> = new Set(['completed', 'failed', 'killed']);

function checkNotification(notification: unknown): void {
  const where = 'formatTaskNotification()';
  const fail = (option: string, expected: string, value: unknown): never => {
    throw invalidArgument({ where, option, expected, value });
  };
  if (!isObject(notification)) {
    fail('notification', 'an object ({ taskId, status, description, … })', notification);
    return;
  }
  for (const option of ['taskId', 'description'] as const) {
    if (typeof notification[option] !== 'string') {
      fail(`notification.${option}`, 'a string', notification[option]);
    }
  }
  if (!ENDED_STATUSES.has(notification['status'])) {
    fail('notification.status', '"completed", "failed" or "killed"', notification['status']);
  }
  for (const option of ['agentId', 'name', 'result', 'error'] as const) {
    const value = notification[option];
    if (value !== undefined && typeof value !== 'string') {
      fail(`notification.${option}`, 'a string when set', value);
    }
  }
  const worktree = notification['worktree'];
  if (worktree !== undefined && !(isObject(worktree) && typeof worktree['path'] === 'string')) {
    fail('notification.worktree', 'an object with a string path when set', worktree);
  }
}

/**
 * Renders the message a parent sees in its next turn when a task ends. Every field is
 * escaped ({@link escapeNotificationField}, {@link escapeNotificationText}): no description,
 * name, error or result can close the notification or open another one.
 */
export function formatTaskNotification(notification: TaskNotification): string {
  checkNotification(notification);
  const field = escapeNotificationField;
  const verb =
    notification.status === 'completed'
      ? 'finished'
      : notification.status === 'failed'
        ? 'failed'
        : 'was stopped';
  const lines = [
    '<task-notification>',
    `task-id: ${field(notification.taskId)}`,
    ...(notification.agentId ? [`agent-id: ${field(notification.agentId)}`] : []),
    ...(notification.name ? [`name: ${field(notification.name)}`] : []),
    `status: ${notification.status}`,
    `summary: Background agent "${field(notification.description)}" ${verb}.`,
  ];
  if (notification.error) lines.push(`error: ${escapeNotificationText(notification.error)}`);
  if (notification.result !== undefined)
    lines.push('result:', escapeNotificationText(notification.result));
  const worktree = worktreeLine(notification.worktree);
  if (worktree) lines.push(worktree);
  const usage = usageLine(notification);
  if (usage) lines.push(usage);
  lines.push('</task-notification>');
  return lines.join('\n');
}

/** The ids at the head of a `<task-notification>`. */
export type TaskNotificationHeader = {
  /** The task that ended. */
  taskId: string;
  /** Its agent, for agent tasks. */
  agentId?: string;
};

const HEADER = /<task-notification>\ntask-id: (\S+)\n(?:agent-id: (\S+)\n)?/g;

/**
 * The task and agent ids of every notification {@link formatTaskNotification} wrote in a
 * text. A notification quoted inside another one's result is escaped, so it is not counted.
 */
export function parseTaskNotificationHeaders(text: string): TaskNotificationHeader[] {
  return [...text.matchAll(HEADER)].map((match) => ({
    taskId: unescapeNotificationField(match[1]!),
    ...(match[2] ? { agentId: unescapeNotificationField(match[2]) } : {}),
  }));
}

/** Extracts the task ids of the notifications in a text (for tests and UIs). */
export function parseTaskNotificationIds(text: string): string[] {
  return parseTaskNotificationHeaders(text).map((header) => header.taskId);
}
