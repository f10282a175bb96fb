import {
  type CompleteUsage,
  type SetAppState,
  type TaskState,
  type UserMessage,
  DelegateError,
  createTaskId,
  createUserMessage,
  getText,
  timerDelay,
} from '@delegate/core';
import type {
  EndedTaskStatus,
  QueuedNotification,
  TaskSnapshot,
} from '../transcripts/queued-notification.js';
import { type TaskNotification, formatTaskNotification } from './task-notification.js';
import { startWaitTimer } from '../util/wait-timer.js';
import { checkKnownKeys } from '../util/unknown-option.js';

type Waiter = () => void;

/** The progress fields `update` may change. */
export type TaskPatch = Partial<
  Pick<
    TaskState,
    'usage' | 'costUsd' | 'toolUseCount' | 'lastActivity' | 'isBackgrounded' | 'kill' | 'agentId'
  >
>;

/** How a task ended, as `finish` takes it. */
export type TaskOutcome = {
  /** Final status. */
  status: 'completed' | 'failed' | 'killed';
  /** Result text of a completed task. */
  result?: string;
  /** What went wrong. */
  error?: string;
  /** Final usage. */
  usage?: CompleteUsage;
  /** Cost of the final usage in US dollars. */
  costUsd?: number;
};

/** Refuses a `signal` that is not an AbortSignal, before a timer starts that would use it. */
function checkSignal(signal: unknown, where: string): void {
  if (signal === undefined || signal instanceof AbortSignal) return;
  // One from another copy of the platform's classes (a polyfill, another realm) works the same.
  const candidate = signal as Partial<AbortSignal> | null;
  if (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.aborted === 'boolean' &&
    typeof candidate.addEventListener === 'function' &&
    typeof candidate.removeEventListener === 'function'
  )
    return;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${where}: options.signal must be an AbortSignal (an AbortController's signal), got ${signal === null ? 'null' : typeof signal}.`,
  );
}

// The options object of a public method: undefined (the defaults) or a plain object.
const WAIT_OPTIONS = ['timeoutMs', 'signal'];

function checkOptionsObject(options: unknown, where: string): void {
  if (options === undefined) return;
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) {
    // `{ timeout: 5000 }` would otherwise wait the default time without a word.
    checkKnownKeys({
      where,
      option: 'options',
      value: options as Record<string, unknown>,
      known: WAIT_OPTIONS,
    });
    return;
  }
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${where}: options must be an object such as { timeoutMs: 5000 }, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}.`,
  );
}

// The fields of a task state that hold free text: any of them can repeat a secret.
const TEXT_FIELDS = ['description', 'lastActivity', 'result', 'error'] as const;

type Redact = (text: string) => string;

/** `fields` with `redact` applied to their free text; `fields` itself when nothing changed. */
function redactTaskText<T extends Partial<Pick<TaskState, (typeof TEXT_FIELDS)[number]>>>(
  fields: T,
  redact: Redact | undefined,
): T {
  if (!redact) return fields;
  let copy: T | undefined;
  for (const field of TEXT_FIELDS) {
    const text = fields[field];
    if (typeof text !== 'string') continue;
    const redacted = redact(text);
    if (redacted !== text) (copy ??= { ...fields })[field] = redacted;
  }
  return copy ?? fields;
}

// At most this many ids are listed in a NOT_FOUND message.
const LISTED_IDS = 20;

// Background shells are not counted: no notification comes when one ends, so a host
// waiting for background work would wait for a server that never stops.
function isRunningInBackground(task: TaskState): boolean {
  return task.status === 'running' && task.isBackgrounded === true && task.type !== 'local_bash';
}

/**
 * The tasks of a session, kept at the root: status, usage, last activity, results, and
 * the notifications queued for the parent's next turn. Changes touch only the changed
 * entry; they are mirrored into the root app state (for UIs) once per tick, in one update
 * for every task changed in that tick. Running background tasks are counted, not scanned.
 * Notifications queued for the main agent can be recorded as they are queued and queued
 * again after a restart (`recordQueuedTo`, `restoreQueued`); so can those queued into a
 * sub-agent's inbox (`queuedRecordOf`, `restoreQueued` with `deliver`). With `redact`, the
 * free text a task state keeps (description, last activity, result, error, notification text)
 * is stored redacted, and so are the notification messages queued for a parent (as tool
 * results are).
 */
export class TaskRegistry {
  private readonly tasks = new Map<string, TaskState>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly queue: UserMessage[] = [];
  private readonly queueWaiters = new Set<Waiter>();
  private readonly notified = new Map<string, UserMessage>();
  private readonly pendingDelivery = new Map<string, string>();
  // Notification uuid -> its key, and the uuids already handed to the recorder (or restored).
  private readonly keys = new Map<string, string>();
  private readonly recorded = new Set<string>();
  private recordQueued: ((record: QueuedNotification) => void) | undefined;
  private readonly notifiedEarlier = new Map<string, EndedTaskStatus>();
  private readonly dirty = new Set<string>();
  private setRootState: SetAppState | undefined;
  private flushScheduled = false;
  private backgroundRunning = 0;
  private readonly finishedIds = new Set<string>();
  private readonly maxFinished: number;
  private readonly redact: Redact | undefined;

  /**
   * `setAppStateForTasks`: where changes are mirrored (see {@link TaskRegistry.mirrorTo});
   * `maxFinished`: finished tasks kept (the oldest are forgotten past it; default no limit);
   * `redact`: applied to the text each task state stores (a session passes the one that
   * replaces its secrets by `[REDACTED]`).
   */
  constructor(
    options: { setAppStateForTasks?: SetAppState; maxFinished?: number; redact?: Redact } = {},
  ) {
    this.setRootState = options.setAppStateForTasks;
    this.maxFinished = options.maxFinished ?? Number.POSITIVE_INFINITY;
    this.redact = options.redact;
  }

  /** Mirrors every task change into the root app state from now on (the current tasks at the next tick). */
  mirrorTo(setAppStateForTasks: SetAppState): void {
    this.setRootState = setAppStateForTasks;
    for (const id of this.tasks.keys()) this.markDirty(id);
  }

  /** Registers a running task and returns it (the live entry). */
  register(task: Omit<TaskState, 'id' | 'status' | 'startTime'> & { id?: string }): TaskState {
    const state: TaskState = {
      ...redactTaskText(task, this.redact),
      id: task.id ?? createTaskId(),
      status: 'running',
      startTime: Date.now(),
    };
    this.tasks.set(state.id, state);
    if (isRunningInBackground(state)) this.backgroundRunning++;
    this.markDirty(state.id);
    return state;
  }

  /** Returns a task, or undefined. */
  get(taskId: string): TaskState | undefined {
    return this.tasks.get(taskId);
  }

  /** Returns a task or throws a NOT_FOUND error listing known ids (at most 20); forgotten tasks are not found. */
  require(taskId: string): TaskState {
    const task = this.tasks.get(taskId);
    if (task) return task;
    const known = [...this.tasks.keys()];
    const listed = known.slice(-LISTED_IDS).join(', ');
    throw new DelegateError(
      'NOT_FOUND',
      `No task with id "${taskId}". Known tasks: ${known.length === 0 ? 'none' : known.length > LISTED_IDS ? `${listed} and ${known.length - LISTED_IDS} older` : listed}.`,
    );
  }

  /** Every task, oldest first. */
  list(): TaskState[] {
    return [...this.tasks.values()];
  }

  /** Agent tasks still running in the background (a scan; use `runningBackgroundCount` for the number). */
  runningBackground(): TaskState[] {
    return this.list().filter(isRunningInBackground);
  }

  /** Number of agent tasks running in the background (shells not included), kept as a counter. */
  get runningBackgroundCount(): number {
    return this.backgroundRunning;
  }

  /** Updates a running task's progress fields. */
  update(taskId: string, patch: TaskPatch): void {
    const task = this.tasks.get(taskId);
    if (!task) return;
    const before = isRunningInBackground(task);
    Object.assign(task, redactTaskText(patch, this.redact));
    this.backgroundRunning += Number(isRunningInBackground(task)) - Number(before);
    this.markDirty(taskId);
  }

  /**
   * Marks a task finished. The first final status wins: a task killed while it was
   * finishing stays killed. Returns false when the task had already finished.
   */
  finish(taskId: string, outcome: TaskOutcome): boolean {
    const task = this.tasks.get(taskId);
    if (!task || task.status !== 'running') return false;
    if (isRunningInBackground(task)) this.backgroundRunning--;
    task.status = outcome.status;
    task.endTime = Date.now();
    const { result, error } = redactTaskText(outcome, this.redact);
    if (result !== undefined) task.result = result;
    if (error !== undefined) task.error = error;
    if (outcome.usage) task.usage = outcome.usage;
    if (outcome.costUsd !== undefined) task.costUsd = outcome.costUsd;
    delete task.kill;
    this.markDirty(taskId);
    for (const waiter of this.waiters.get(taskId) ?? []) waiter();
    this.waiters.delete(taskId);
    this.finishedIds.add(taskId);
    this.forgetOldFinished();
    return true;
  }

  private forgetOldFinished(): void {
    while (this.finishedIds.size > this.maxFinished) {
      const oldest = this.finishedIds.values().next().value as string;
      this.finishedIds.delete(oldest);
      this.tasks.delete(oldest);
      this.markDirty(oldest);
    }
  }

  /**
   * Resolves when the task finishes, `timeoutMs` passes or `signal` aborts (at once if it
   * already has); returns the task either way.
   */
  async waitFor(
    taskId: string,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<TaskState> {
    checkOptionsObject(options, 'waitFor');
    const timeoutMs = options.timeoutMs ?? 30_000;
    // Checked before anything returns, so a bad timeout is refused whatever the task's state
    // (and whether there is such a task).
    timerDelay(timeoutMs, 'waitFor: timeoutMs');
    checkSignal(options.signal, 'waitFor');
    const task = this.require(taskId);
    if (task.status !== 'running' || options.signal?.aborted) return task;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        cancelTimer();
        options.signal?.removeEventListener('abort', done);
        this.waiters.get(taskId)?.delete(done);
        resolve();
      };
      const cancelTimer = startWaitTimer({ timeoutMs, onTimeout: done, where: 'waitFor' });
      options.signal?.addEventListener('abort', done, { once: true });
      const set = this.waiters.get(taskId) ?? new Set<Waiter>();
      set.add(done);
      this.waiters.set(taskId, set);
    });
    return task;
  }

  /**
   * Queues the `<task-notification>` of a finished task and returns its message. Each
   * task notifies once: a second call for the same task (a stop racing a finish, a
   * settle that failed halfway) returns the first message and queues nothing. `deliver`
   * hands the message to a parent other than the main agent (false when it cannot take
   * it: it then goes to the main agent); once the session is aborted nobody can take it,
   * and it stays with the task as `undeliverable`.
   */
  notify(
    notification: TaskNotification,
    options: {
      deliver?: (message: UserMessage) => boolean;
      key?: string;
      signal?: AbortSignal;
    } = {},
  ): UserMessage {
    const key = options.key ?? notification.taskId;
    const existing = this.notified.get(key);
    if (existing) return existing;
    const text = formatTaskNotification(notification);
    // Redacted as a tool result is: a background agent's report reaches its parent this way.
    const message = createUserMessage({
      content: this.redact ? this.redact(text) : text,
      isMeta: true,
    });
    this.notified.set(key, message);
    this.pendingDelivery.set(message.uuid, notification.taskId);
    this.keys.set(message.uuid, key);
    if (options.signal?.aborted) this.settleDelivery([message], 'undeliverable');
    else if (options.deliver?.(message))
      this.setNotification(notification.taskId, message, 'queued');
    else this.enqueue(message);
    return message;
  }

  /**
   * Queues a notification message for the main agent's next turn. A notification queued
   * for the first time goes to the recorder (see {@link TaskRegistry.recordQueuedTo}).
   */
  enqueue(message: UserMessage): void {
    const taskId = this.pendingDelivery.get(message.uuid);
    if (taskId) {
      this.setNotification(taskId, message, 'queued');
      this.record(taskId, message);
    }
    this.queue.push(message);
    for (const waiter of this.queueWaiters) waiter();
    this.queueWaiters.clear();
  }

  /**
   * From now on, hands every notification queued for the main agent to `record` once, as
   * it is queued (the session writes it to the main transcript, so a resumed session can
   * queue it again until a request has carried it). There is one recorder: a call replaces
   * the previous one, so on a `DelegateSession`'s registry it would stop the session's own
   * recording. It is for hosts that build their own registry.
   */
  recordQueuedTo(record: (queued: QueuedNotification) => void): void {
    this.recordQueued = record;
  }

  /**
   * Queues notifications recorded by an earlier process again (a resumed session or a
   * resumed agent), each once: its task comes back as it was when it notified (unless this
   * registry has the task), with its notification `queued`. Without `deliver` they are
   * queued for the main agent and not recorded again; with `deliver` each goes to the
   * sub-agent it was recorded for (`deliver` puts its message in that agent's inbox),
   * unless its task's notification is known to have been queued for the main agent
   * instead (see {@link TaskRegistry.rememberNotified}). Returns the number queued.
   */
  restoreQueued(
    records: readonly QueuedNotification[],
    options: { deliver?: (record: QueuedNotification) => void } = {},
  ): number {
    let queued = 0;
    for (const record of records) {
      const { taskId, key, message, task } = record;
      if (this.recorded.has(message.uuid) || this.notified.has(key)) continue;
      if (options.deliver && this.notifiedEarlier.has(taskId)) continue;
      // Only the main agent's are marked recorded: a sub-agent's that ends up with the main
      // agent (its parent failed) is recorded in the main transcript then.
      if (!options.deliver) this.recorded.add(message.uuid);
      if (task && !this.tasks.has(taskId)) this.restoreTask(task);
      this.notified.set(key, message);
      this.pendingDelivery.set(message.uuid, taskId);
      this.keys.set(message.uuid, key);
      if (options.deliver) {
        this.setNotification(taskId, message, 'queued');
        options.deliver(record);
      } else this.enqueue(message);
      queued++;
    }
    return queued;
  }

  /**
   * Remembers tasks whose notification an earlier process queued for the main agent (read
   * from the main transcript by a resumed session), and how each ended.
   */
  rememberNotified(tasks: ReadonlyMap<string, EndedTaskStatus>): void {
    for (const [taskId, status] of tasks) this.notifiedEarlier.set(taskId, status);
  }

  /** How task `taskId` ended, when {@link TaskRegistry.rememberNotified} was told of it. */
  notifiedEarlierStatus(taskId: string): EndedTaskStatus | undefined {
    return this.notifiedEarlier.get(taskId);
  }

  private restoreTask(snapshot: TaskSnapshot): void {
    const task: TaskState = { ...redactTaskText(snapshot, this.redact) };
    // A restored task never runs here: nothing could stop it or wait for it.
    if (task.status === 'running') {
      task.status = 'failed';
      task.error ??= 'The process that ran this task stopped before it finished.';
    }
    this.tasks.set(task.id, task);
    this.finishedIds.add(task.id);
    this.markDirty(task.id);
    this.forgetOldFinished();
  }

  private record(taskId: string, message: UserMessage): void {
    if (!this.recordQueued || this.recorded.has(message.uuid)) return;
    const queued = this.queuedRecordOf(message) ?? { taskId, key: taskId, message };
    this.recorded.add(message.uuid);
    this.recordQueued(queued);
  }

  /**
   * What a transcript records of a notification not yet delivered (its task, key, message
   * and the task as it is now); undefined for a message that is not such a notification.
   */
  queuedRecordOf(message: UserMessage): QueuedNotification | undefined {
    const taskId = this.pendingDelivery.get(message.uuid);
    if (taskId === undefined) return undefined;
    const task = this.tasks.get(taskId);
    let snapshot: TaskSnapshot | undefined;
    if (task) {
      const { kill: _kill, notification: _notification, ...rest } = task;
      snapshot = rest;
    }
    return {
      taskId,
      key: this.keys.get(message.uuid) ?? taskId,
      message,
      ...(snapshot ? { task: snapshot } : {}),
    };
  }

  /** Marks the notifications among `messages` delivered (a request is about to carry them); returns `messages`. */
  markDelivered = (messages: UserMessage[]): UserMessage[] => {
    this.settleDelivery(messages, 'delivered');
    return messages;
  };

  /** The notifications among `messages` (others are ignored), for handing them on. */
  notificationsAmong(messages: readonly UserMessage[]): UserMessage[] {
    return messages.filter((message) => this.pendingDelivery.has(message.uuid));
  }

  /**
   * The main agent is gone (the session was aborted): every notification still queued for
   * it stays with its task as `undeliverable` and leaves the queue. A recorded one is queued
   * again by a session resumed from the transcript.
   */
  abandonQueued(): void {
    this.settleDelivery(this.queue.splice(0, this.queue.length), 'undeliverable');
  }

  /**
   * Marks the notifications among `messages` `undeliverable` (the session was aborted while
   * they waited in a sub-agent's inbox; its transcript keeps them owed to it).
   */
  abandon(messages: readonly UserMessage[]): void {
    this.settleDelivery(messages, 'undeliverable');
  }

  /** Takes every queued notification (each is delivered once). */
  drainNotifications = (): UserMessage[] =>
    this.markDelivered(this.queue.splice(0, this.queue.length));

  /** Number of notifications waiting. */
  get pendingNotifications(): number {
    return this.queue.length;
  }

  /** Resolves when a notification is queued (at once if one is waiting) or on timeout. */
  async waitForNotification(
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<boolean> {
    checkOptionsObject(options, 'waitForNotification');
    const timeoutMs = options.timeoutMs ?? 60_000;
    timerDelay(timeoutMs, 'waitForNotification: timeoutMs');
    checkSignal(options.signal, 'waitForNotification');
    if (this.queue.length > 0) return true;
    // An abort event that has already fired never fires again: do not wait out the timeout.
    if (options.signal?.aborted) return false;
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        cancelTimer();
        options.signal?.removeEventListener('abort', done);
        this.queueWaiters.delete(done);
        resolve(this.queue.length > 0);
      };
      const cancelTimer = startWaitTimer({
        timeoutMs,
        onTimeout: done,
        where: 'waitForNotification',
      });
      options.signal?.addEventListener('abort', done, { once: true });
      this.queueWaiters.add(done);
    });
  }

  /** Writes the changes not mirrored yet into the root app state now (also done every tick). */
  flushMirror(): void {
    this.flushScheduled = false;
    if (this.dirty.size === 0 || !this.setRootState) return;
    const changed: Record<string, TaskState> = {};
    const forgotten: string[] = [];
    for (const id of this.dirty) {
      const task = this.tasks.get(id);
      if (task) changed[id] = { ...task };
      else forgotten.push(id);
    }
    this.dirty.clear();
    this.setRootState((previous) => {
      const tasks = { ...previous.tasks, ...changed };
      for (const id of forgotten) delete tasks[id];
      return { ...previous, tasks };
    });
  }

  private settleDelivery(
    messages: readonly UserMessage[],
    status: 'delivered' | 'undeliverable',
  ): void {
    for (const message of messages) {
      const taskId = this.pendingDelivery.get(message.uuid);
      if (taskId === undefined) continue;
      this.pendingDelivery.delete(message.uuid);
      this.keys.delete(message.uuid);
      this.setNotification(taskId, message, status);
    }
  }

  private setNotification(
    taskId: string,
    message: UserMessage,
    status: 'queued' | 'delivered' | 'undeliverable',
  ): void {
    const task = this.tasks.get(taskId);
    if (!task) return;
    const text = getText(message.message.content);
    task.notification = { status, text: this.redact ? this.redact(text) : text };
    this.markDirty(taskId);
  }

  private markDirty(taskId: string): void {
    if (!this.setRootState) return;
    this.dirty.add(taskId);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flushMirror()).unref();
  }
}
