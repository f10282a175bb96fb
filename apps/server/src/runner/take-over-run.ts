import type { RunEventHub } from '../events/run-event-hub.js';
import type { RunInput, RunRecord, RunStore } from '../store/run-store.js';
import { endRunningTasks } from './end-running-tasks.js';

const FAILOVER_NOTE =
  'The worker running this session stopped while you were working, and another worker took over. Your last finished turn is kept; read-only tool calls that were in flight ran again, and the others did not complete (their results say so). Check what they were meant to do before doing it again, continue the task, then give your report.';

function now(): string {
  return new Date().toISOString();
}

/**
 * Takes over a run whose worker stopped answering (its queue job was handed to this worker):
 * the agents that were working are marked interrupted, so they resume from their last
 * stored turn (the stopped worker's tasks end `killed`; a resumed agent's task is stored again as it runs),
 * and the log records the failover and each retried turn. Past `maxFailovers` the run is
 * failed with the reason instead. Returns the run and the input to resume it
 * with, or undefined when it was failed (or changed meanwhile).
 */
export async function takeOverRun(options: {
  store: RunStore;
  hub: RunEventHub;
  run: RunRecord;
  failovers: number;
  maxFailovers: number;
}): Promise<{ run: RunRecord; input: RunInput } | undefined> {
  const { store, hub, run, failovers, maxFailovers } = options;
  const inFlight = (await store.listAgents(run.id)).filter((agent) => agent.status === 'running');
  const exhausted = failovers > maxFailovers;
  const reason = exhausted
    ? `The run's worker stopped ${failovers} times (at most ${maxFailovers} takeovers are allowed, --max-failovers), so the run was failed. POST /v1/runs/${run.id}/resume tries again from the last finished turn.`
    : `The worker stopped while this agent was working; another worker resumes it from its last finished turn.`;
  await hub.publish(run.id, {
    type: 'run.failover',
    failovers: Math.max(1, failovers),
    maxFailovers,
    retriedAgents: exhausted ? [] : inFlight.map((agent) => agent.agentId),
  });
  for (const agent of inFlight) {
    const status = exhausted ? 'failed' : 'interrupted';
    await store.upsertAgent({ ...agent, status, currentTool: null, endedAt: now(), error: reason });
    void hub.publish(run.id, {
      type: 'agent.status',
      agentId: agent.agentId,
      status,
      error: reason,
    });
    if (!exhausted)
      void hub.publish(run.id, {
        type: 'agent.retried',
        agentId: agent.agentId,
        reason: 'failover',
      });
  }
  await endRunningTasks({
    store,
    hub,
    runId: run.id,
    reason: 'The worker running this task stopped answering, and the task ended with it.',
  });
  if (exhausted) {
    const error = { code: 'FAILOVER_LIMIT', message: reason };
    const failed = await store.transitionRun({
      runId: run.id,
      from: ['running'],
      patch: { status: 'failed', error, endedAt: now() },
    });
    if (failed) await hub.publish(run.id, { type: 'run.status', status: 'failed', error });
    return undefined;
  }
  const current = await store.getRun(run.id);
  if (current?.status !== 'running') return undefined;
  // Takeovers log no run.input of their own, so this is what the user asked in this turn.
  const asked = await store.lastEventOfType({ runId: run.id, type: 'run.input' });
  const original = typeof asked?.data.text === 'string' ? asked.data.text : current.prompt;
  return { run: current, input: { kind: 'resume', text: FAILOVER_NOTE, original } };
}
