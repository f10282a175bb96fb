import type { RunEventHub } from '../events/run-event-hub.js';
import type { RunStore } from '../store/run-store.js';

/**
 * Ends the run's tasks the store still has as running, as `killed` (what a stop records), with
 * a `task.status` event each: the process that ran them stopped (a crash, a kill, a worker that
 * stopped answering), so nothing else will ever end them, and they would show as running for
 * good. A resumed agent's task is stored again as it runs. Returns how many it ended.
 */
export async function endRunningTasks(options: {
  store: RunStore;
  hub: RunEventHub;
  runId: string;
  /** Why they ended, as the events say. */
  reason: string;
  /**
   * False to store them without a `task.status` event: for a run that has ended, whose log
   * ends with its final status.
   */
  announce?: boolean;
}): Promise<number> {
  const { store, hub, runId, reason } = options;
  let ended = 0;
  const endedAt = new Date().toISOString();
  for (const task of await store.listTasks(runId)) {
    if (task.status !== 'running') continue;
    await store.upsertTask({ ...task, status: 'killed', endedAt });
    ended += 1;
    if (options.announce === false) continue;
    void hub.publish(runId, {
      type: 'task.status',
      taskId: task.taskId,
      agentId: task.agentId,
      status: 'killed',
      error: reason,
    });
  }
  return ended;
}
