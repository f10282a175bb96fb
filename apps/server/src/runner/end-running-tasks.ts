import type { RunEventHub } from '../events/run-event-hub.js';
import type { AgentRecord, AgentStatus, RunStore } from '../store/run-store.js';

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

/**
 * Ends the run's agents the store still has as running with `status` and `error`, with an
 * `agent.status` event each (a crash, a takeover or a broken turn stopped them). Returns them as
 * they were.
 */
export async function endRunningAgents(options: {
  store: RunStore;
  hub: RunEventHub;
  runId: string;
  status: Extract<AgentStatus, 'interrupted' | 'failed'>;
  error: string;
}): Promise<AgentRecord[]> {
  const { store, hub, runId, status, error } = options;
  const running = (await store.listAgents(runId)).filter((agent) => agent.status === 'running');
  const endedAt = new Date().toISOString();
  for (const agent of running) {
    await store.upsertAgent({ ...agent, status, currentTool: null, endedAt, error });
    void hub.publish(runId, { type: 'agent.status', agentId: agent.agentId, status, error });
  }
  return running;
}
