import {
  type CompleteUsage,
  type SetAppState,
  type TaskState,
  type UserMessage,
  DelegateError,
  createTaskId,
  createUserMessage,
} from '@delegate/core';
import { type TaskNotification, formatTaskNotification } from './task-notification.js';

type Waiter = () => void;

/** The progress fields `update` may change. */
export type TaskPatch = Partial<
  Pick<TaskState, 'usage' | 'toolUseCount' | 'lastActivity' | 'isBackgrounded' | 'kill' | 'agentId'>
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
};

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
 */
export class TaskRegistry {
  private readonly tasks = new Map<string, TaskState>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly queue: UserMessage[] = [];
  private readonly queueWaiters = new Set<Waiter>();
  private readonly dirty = new Set<string>();
  private setRootState: SetAppState | undefined;
  private flushScheduled = false;
  private backgroundRunning = 0;
  private readonly finishedIds = new Set<string>();
  private readonly maxFinished: number;

  /**
   * `setAppStateForTasks`: where changes are mirrored (see {@link TaskRegistry.mirrorTo});
   * `maxFinished`: finished tasks kept (the oldest are forgotten past it; default no limit).
   */
  constructor(options: { setAppStateForTasks?: SetAppState; maxFinished?: number } = {}) {
    this.setRootState = options.setAppStateForTasks;
    this.maxFinished = options.maxFinished ?? Number.POSITIVE_INFINITY;
  }

  /** Mirrors every task change into the root app state from now on (the current tasks at the next tick). */
  mirrorTo(setAppStateForTasks: SetAppState): void {
    this.setRootState = setAppStateForTasks;
    for (const id of this.tasks.keys()) this.markDirty(id);
  }

  /** Registers a running task and returns it (the live entry). */
  register(task: Omit<TaskState, 'id' | 'status' | 'startTime'> & { id?: string }): TaskState {
    const state: TaskState = {
      ...task,
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
    Object.assign(task, patch);
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
    if (outcome.result !== undefined) task.result = outcome.result;
    if (outcome.error !== undefined) task.error = outcome.error;
    if (outcome.usage) task.usage = outcome.usage;
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
    const task = this.require(taskId);
    if (task.status !== 'running' || options.signal?.aborted) return task;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', done);
        this.waiters.get(taskId)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, options.timeoutMs ?? 30_000);
      options.signal?.addEventListener('abort', done, { once: true });
      const set = this.waiters.get(taskId) ?? new Set<Waiter>();
      set.add(done);
      this.waiters.set(taskId, set);
    });
    return task;
  }

  /** Queues a `<task-notification>` for the parent's next turn and returns its message. */
  notify(notification: TaskNotification): UserMessage {
    const message = createUserMessage({
      content: formatTaskNotification(notification),
      isMeta: true,
    });
    this.queue.push(message);
    for (const waiter of this.queueWaiters) waiter();
    this.queueWaiters.clear();
    return message;
  }

  /** Takes every queued notification (each is delivered once). */
  drainNotifications = (): UserMessage[] => this.queue.splice(0, this.queue.length);

  /** Number of notifications waiting. */
  get pendingNotifications(): number {
    return this.queue.length;
  }

  /** Resolves when a notification is queued (at once if one is waiting) or on timeout. */
  async waitForNotification(
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<boolean> {
    if (this.queue.length > 0) return true;
    // An abort event that has already fired never fires again: do not wait out the timeout.
    if (options.signal?.aborted) return false;
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', done);
        this.queueWaiters.delete(done);
        resolve(this.queue.length > 0);
      };
      const timer = setTimeout(done, options.timeoutMs ?? 60_000);
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

  private markDirty(taskId: string): void {
    if (!this.setRootState) return;
    this.dirty.add(taskId);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flushMirror()).unref();
  }
}
