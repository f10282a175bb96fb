import {
  type Message,
  type SystemMessage,
  type TaskState,
  UserMessage,
  createUuid,
} from '@delegate/core';
import { z } from 'zod';
import type { TranscriptEntry } from './transcript-store.js';

/** A finished task as it was when its notification was queued (what a resumed session shows). */
export type TaskSnapshot = Omit<TaskState, 'kill' | 'notification'>;

/**
 * A `<task-notification>` queued for its parent, as the parent's transcript records it: the
 * main transcript for the main agent, the agent's own transcript for a running sub-agent
 * (its inbox).
 */
export type QueuedNotification = {
  /** The task the notification is about. */
  taskId: string;
  /** What makes it unique: a task notifies once per key (usually the task id). */
  key: string;
  /** The message the parent gets; its uuid is the one its delivery line carries. */
  message: UserMessage;
  /** The task when the notification was queued, when the registry still had it. */
  task?: TaskSnapshot;
};

/** Subtype of the `system` line that records a queued notification (never sent to the model). */
export const QUEUED_NOTIFICATION_SUBTYPE = 'task_notification_queued';

const TaskSnapshotSchema = z
  .object({
    id: z.string().min(1),
    type: z.enum(['local_agent', 'local_bash', 'remote_agent']),
    description: z.string(),
    status: z.enum(['running', 'completed', 'failed', 'killed']),
    startTime: z.number(),
  })
  .passthrough();

const QueuedNotificationSchema = z.object({
  taskId: z.string().min(1),
  key: z.string().min(1),
  message: UserMessage,
  task: TaskSnapshotSchema.optional(),
});

/** A transcript line that records a queued notification. */
export type QueuedNotificationEntry = SystemMessage & { queuedNotification: QueuedNotification };

/**
 * The transcript-only line written when a notification is queued for the main agent, or,
 * with `agentId`, into that sub-agent's inbox (the line goes to its own transcript).
 */
export function queuedNotificationEntry(
  record: QueuedNotification,
  agentId?: string,
): QueuedNotificationEntry {
  return {
    type: 'system',
    subtype: QUEUED_NOTIFICATION_SUBTYPE,
    uuid: createUuid(),
    timestamp: new Date().toISOString(),
    content: `Notification of task ${record.taskId} queued for ${agentId ? `agent ${agentId}` : 'the main agent'}'s next turn.`,
    queuedNotification: record,
  };
}

function isQueuedNotificationLine(entry: Message): boolean {
  return entry.type === 'system' && entry.subtype === QUEUED_NOTIFICATION_SUBTYPE;
}

function stripTranscriptFields(entry: TranscriptEntry): Message {
  const {
    sessionId: _session,
    parentUuid: _parent,
    isSidechain: _side,
    parentAgentId: _agent,
    ...message
  } = entry;
  return message as Message;
}

/** What a transcript (the main one, or a sub-agent's) holds for a conversation picked up again. */
export type RestoredSession = {
  /** The conversation, without transcript-only fields and lines. */
  messages: Message[];
  /** Notifications queued for its agent that no user message of the conversation carries, oldest first. */
  pendingNotifications: QueuedNotification[];
  /** Uuid of the last line the chain continues from (progress lines are not part of it). */
  lastUuid: string | undefined;
  /**
   * Every task with a recorded notification, delivered or not (those tasks had ended), and
   * how it ended (a record that does not say is left out).
   */
  notifiedTasks: Map<string, EndedTaskStatus>;
};

/** How a task that notified ended. */
export type EndedTaskStatus = 'completed' | 'failed' | 'killed';

// The notification's own `status:` line. It comes before the error and the result (which may
// hold lines of their own), so the first match is it.
const STATUS_LINE = /\nstatus: (completed|failed|killed)\n/;

/** How the task of `record` ended: from its snapshot, else its text; undefined when neither says. */
function endedStatusOf(record: QueuedNotification): EndedTaskStatus | undefined {
  const status = record.task?.status;
  if (status === 'completed' || status === 'failed' || status === 'killed') return status;
  const content = record.message.message.content;
  const text =
    typeof content === 'string'
      ? content
      : content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
  return STATUS_LINE.exec(text)?.[1] as EndedTaskStatus | undefined;
}

/**
 * Splits a transcript (the main one, or a sub-agent's) into the conversation and the
 * notifications still owed to its agent: each queued record whose message uuid no user message of the conversation
 * has (a delivered notification is written as that user message before the request that
 * carries it is sent). A record that is not a valid notification is skipped and reported
 * to `onWarning` with `path` and the line's uuid (it cannot stop the conversation from
 * being picked up).
 */
export function restoreSessionTranscript(
  entries: readonly TranscriptEntry[],
  path: string,
  onWarning: (message: string) => void,
): RestoredSession {
  const messages: Message[] = [];
  const queued = new Map<string, QueuedNotification>();
  const delivered = new Set<string>();
  for (const entry of entries) {
    if (!isQueuedNotificationLine(entry)) {
      messages.push(stripTranscriptFields(entry));
      if (entry.type === 'user') delivered.add(entry.uuid);
      continue;
    }
    const parsed = QueuedNotificationSchema.safeParse(
      (entry as Partial<QueuedNotificationEntry>).queuedNotification,
    );
    if (!parsed.success) {
      onWarning(
        `${path}: the ${QUEUED_NOTIFICATION_SUBTYPE} line ${entry.uuid} holds no valid notification (${parsed.error.issues[0]?.message ?? 'invalid'}), so it was skipped; the notification it recorded is not queued again.`,
      );
      continue;
    }
    const record = parsed.data as QueuedNotification;
    if (!queued.has(record.message.uuid)) queued.set(record.message.uuid, record);
  }
  return {
    messages,
    pendingNotifications: [...queued.values()].filter(
      (record) => !delivered.has(record.message.uuid),
    ),
    lastUuid: entries.filter((entry) => entry.type !== 'progress').at(-1)?.uuid,
    notifiedTasks: notifiedTasksOf(queued.values()),
  };
}

function notifiedTasksOf(records: Iterable<QueuedNotification>): Map<string, EndedTaskStatus> {
  const ended = new Map<string, EndedTaskStatus>();
  for (const record of records) {
    const status = endedStatusOf(record);
    if (status) ended.set(record.taskId, status);
  }
  return ended;
}
