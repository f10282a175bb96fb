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

/**
 * The tasks of a session, kept at the root: status, usage, last activity, results, and
 * the notifications queued for the parent's next turn. Every change is mirrored into the
 * root app state through `setAppStateForTasks` so UIs see it.
 */
export class TaskRegistry {
  private readonly tasks = new Map<string, TaskState>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly queue: UserMessage[] = [];
  private readonly queueWaiters = new Set<Waiter>();
  private setRootState: SetAppState | undefined;

  constructor(options: { setAppStateForTasks?: SetAppState } = {}) {
    this.setRootState = options.setAppStateForTasks;
  }

  /** Mirrors every task change into the root app state from now on. */
  mirrorTo(setAppStateForTasks: SetAppState): void {
    this.setRootState = setAppStateForTasks;
    for (const task of this.tasks.values()) this.mirror(task);
  }

  /** Registers a running task and returns it. */
  register(task: Omit<TaskState, 'id' | 'status' | 'startTime'> & { id?: string }): TaskState {
    const state: TaskState = {
      ...task,
      id: task.id ?? createTaskId(),
      status: 'running',
      startTime: Date.now(),
    };
    this.tasks.set(state.id, state);
    this.mirror(state);
    return state;
  }

  /** Returns a task, or undefined. */
  get(taskId: string): TaskState | undefined {
    return this.tasks.get(taskId);
  }

  /** Returns a task or throws a NOT_FOUND error listing the known ids. */
  require(taskId: string): TaskState {
    const task = this.tasks.get(taskId);
    if (!task) {
      const known = [...this.tasks.keys()];
      throw new DelegateError(
        'NOT_FOUND',
        `No task with id "${taskId}". Known tasks: ${known.length > 0 ? known.join(', ') : 'none'}.`,
      );
    }
    return task;
  }

  /** Every task, oldest first. */
  list(): TaskState[] {
    return [...this.tasks.values()];
  }

  /** Tasks still running in the background. */
  runningBackground(): TaskState[] {
    return this.list().filter((task) => task.status === 'running' && task.isBackgrounded);
  }

  /** Updates a running task's progress fields. */
  update(
    taskId: string,
    patch: Partial<
      Pick<
        TaskState,
        'usage' | 'toolUseCount' | 'lastActivity' | 'isBackgrounded' | 'kill' | 'agentId'
      >
    >,
  ): void {
    const task = this.tasks.get(taskId);
    if (!task) return;
    Object.assign(task, patch);
    this.mirror(task);
  }

  /**
   * Marks a task finished. The first final status wins: a task killed while it was
   * finishing stays killed. Returns false when the task had already finished.
   */
  finish(
    taskId: string,
    outcome: {
      status: 'completed' | 'failed' | 'killed';
      result?: string;
      error?: string;
      usage?: CompleteUsage;
    },
  ): boolean {
    const task = this.tasks.get(taskId);
    if (!task || task.status !== 'running') return false;
    task.status = outcome.status;
    task.endTime = Date.now();
    if (outcome.result !== undefined) task.result = outcome.result;
    if (outcome.error !== undefined) task.error = outcome.error;
    if (outcome.usage) task.usage = outcome.usage;
    delete task.kill;
    this.mirror(task);
    for (const waiter of this.waiters.get(taskId) ?? []) waiter();
    this.waiters.delete(taskId);
    return true;
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

  private mirror(task: TaskState): void {
    this.setRootState?.((previous) => ({
      ...previous,
      tasks: { ...previous.tasks, [task.id]: { ...task } },
    }));
  }
}
