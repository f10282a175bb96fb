import type { AppState, SetAppState, TaskState } from '@delegate/core';
import type { TaskRegistry } from './task-registry.js';

function changedShells(previous: AppState, next: AppState): TaskState[] {
  if (next.tasks === previous.tasks) return [];
  const changed: TaskState[] = [];
  for (const [id, task] of Object.entries(next.tasks)) {
    if (task.type === 'local_bash' && previous.tasks[id] !== task) changed.push(task);
  }
  return changed;
}

function recordShell(
  tasks: TaskRegistry,
  shell: TaskState,
  onNewShell: ((taskId: string) => void) | undefined,
): void {
  const known = tasks.get(shell.id);
  if (!known) {
    const { status: _status, startTime: _start, endTime: _end, ...fields } = shell;
    tasks.register(fields);
    onNewShell?.(shell.id);
  }
  if (shell.status === 'running') return;
  tasks.finish(shell.id, {
    status:
      shell.status === 'completed' ? 'completed' : shell.status === 'killed' ? 'killed' : 'failed',
    ...(shell.result !== undefined ? { result: shell.result } : {}),
    ...(shell.error !== undefined ? { error: shell.error } : {}),
  });
}

/**
 * Wraps the root store's task setter so background shells that any agent's Bash tool
 * registers there (the main agent's or a sub-agent's, through `setAppStateForTasks`) are
 * also tasks of `tasks`, with their status kept in step, and kills every running shell
 * when `signal` aborts. A sub-agent's own abort link is gone once it finishes, so without
 * this a shell it left running would outlive `session.abort()`. `onNewShell` hears the id
 * of each shell once, when it is first seen.
 */
export function trackShellTasks(options: {
  tasks: TaskRegistry;
  setState: SetAppState;
  signal: AbortSignal;
  onNewShell?: (taskId: string) => void;
}): SetAppState {
  const { tasks, setState, signal, onNewShell } = options;
  const killShells = (): void => {
    for (const task of tasks.list()) {
      if (task.type === 'local_bash' && task.status === 'running') task.kill?.();
    }
  };
  if (signal.aborted) killShells();
  else signal.addEventListener('abort', killShells, { once: true });
  return (update) => {
    let changed: TaskState[] = [];
    setState((previous) => {
      const next = update(previous);
      changed = changedShells(previous, next);
      return next;
    });
    for (const shell of changed) recordShell(tasks, shell, onNewShell);
    // A shell started after the abort (its tool call was already running) is stopped too.
    if (signal.aborted) killShells();
  };
}
