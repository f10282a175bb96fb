import type { RunStore } from '../store/run-store.js';

/**
 * Ends the run's tasks the store still has as running, as `killed`: their process stopped
 * (a crash, a kill, a worker that stopped answering), so nothing will ever end them. A resumed
 * run goes on under new tasks; these would otherwise show as running for good.
 */
export async function endRunningTasks(store: RunStore, runId: string): Promise<void> {
  const endedAt = new Date().toISOString();
  for (const task of await store.listTasks(runId)) {
    if (task.status !== 'running') continue;
    await store.upsertTask({ ...task, status: 'killed', endedAt });
  }
}
