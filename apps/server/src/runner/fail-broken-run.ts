import type { RunEventHub } from '../events/run-event-hub.js';
import type { RunStore } from '../store/run-store.js';
import { endRunningAgents, endRunningTasks } from './end-running-tasks.js';

function now(): string {
  return new Date().toISOString();
}

/**
 * Fails a run whose turn broke off with an error the turn itself could not record (the store
 * refused the write that ends the turn, say): its agents still `running` are failed with the
 * reason, its running tasks end `killed`, and the run is failed with code `INTERNAL`, so it does
 * not show as running for good and `POST /v1/runs/{id}/resume` can continue it from its
 * transcripts. Does nothing to a run that is not `running` any more. Returns true when it failed
 * the run.
 */
export async function failBrokenRun(options: {
  store: RunStore;
  hub: RunEventHub;
  runId: string;
  /** What went wrong, already redacted. */
  reason: string;
}): Promise<boolean> {
  const { store, hub, runId } = options;
  const current = await store.getRun(runId);
  if (current?.status !== 'running') return false;
  const message = `The server failed while running this turn (${options.reason}). POST /v1/runs/${runId}/resume continues it from its last finished turn.`;
  await endRunningAgents({ store, hub, runId, status: 'failed', error: message });
  await endRunningTasks({
    store,
    hub,
    runId,
    reason: 'The server failed while running this turn, and the task ended with it.',
  });
  const error = { code: 'INTERNAL', message };
  const failed = await store.transitionRun({
    runId,
    from: ['running'],
    patch: { status: 'failed', error, endedAt: now() },
  });
  if (!failed) return false;
  await hub.publish(runId, { type: 'run.status', status: 'failed', error });
  await hub.flush(runId);
  return true;
}
