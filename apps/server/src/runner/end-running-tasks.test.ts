import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunEventHub } from '../events/run-event-hub.js';
import { InProcessRunQueue } from '../queue/in-process-run-queue.js';
import type { KyselyRunStore } from '../store/kysely-run-store.js';
import { sampleAgent, sampleRun } from '../store/run-store-contract.js';
import type { RunRecord, TaskRecord } from '../store/run-store.js';
import { openSqliteRunStore } from '../store/sqlite-run-store.js';
import { RunService } from './run-service.js';
import { takeOverRun } from './take-over-run.js';

function task(runId: string, taskId: string, overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    runId,
    taskId,
    agentId: null,
    type: 'local_bash',
    description: `task ${taskId}`,
    status: 'running',
    backgrounded: true,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: null,
    ...overrides,
  };
}

describe('tasks of a process that stopped', () => {
  let directory: string;
  let store: KyselyRunStore;
  let hub: RunEventHub;
  let run: RunRecord;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'delegate-tasks-'));
    store = openSqliteRunStore({ path: join(directory, 'runs.sqlite') });
    await store.migrate();
    hub = new RunEventHub({ store });
    run = await store.createRun(sampleRun({ status: 'running', pending: null }));
    await store.upsertAgent(sampleAgent(run.id, 'main', { mode: 'main' }));
    await store.upsertAgent(sampleAgent(run.id, 'a1', { taskId: 't-agent' }));
    await store.upsertTask(task(run.id, 't-agent', { agentId: 'a1', type: 'local_agent' }));
    await store.upsertTask(task(run.id, 't-shell'));
    await store.upsertTask(
      task(run.id, 't-done', { status: 'completed', endedAt: '2026-01-01T00:00:05.000Z' }),
    );
  });
  afterEach(async () => {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  });

  /** A service over the test's store, with no executor: nothing runs what it queues. */
  function newService(): RunService {
    return new RunService({
      store,
      hub,
      queue: new InProcessRunQueue({ concurrency: 1 }),
      executor: undefined,
      logger: pino({ level: 'silent' }),
      workspaceRoots: [directory],
      dataDir: directory,
      redact: (value) => value,
    });
  }

  async function expectRunningTasksKilled(reason: RegExp): Promise<void> {
    const tasks = await store.listTasks(run.id);
    expect(tasks.map((item) => [item.taskId, item.status])).toEqual([
      ['t-agent', 'killed'],
      ['t-shell', 'killed'],
      ['t-done', 'completed'],
    ]);
    expect(tasks.every((item) => item.endedAt !== null)).toBe(true);
    expect(tasks[2]?.endedAt).toBe('2026-01-01T00:00:05.000Z');
    await hub.flush(run.id);
    const events = await store.listEvents({ runId: run.id, after: 0, limit: 100 });
    const ended = events.filter((event) => event.type === 'task.status');
    expect(ended.map((event) => [event.data.taskId, event.agentId, event.data.status])).toEqual([
      ['t-agent', 'a1', 'killed'],
      ['t-shell', null, 'killed'],
    ]);
    for (const event of ended) expect(event.data.error).toMatch(reason);
  }

  it('ends them killed, with an event each, when a restart marks the run interrupted', async () => {
    const service = newService();
    expect((await service.recover()).interrupted).toEqual([run.id]);
    await expectRunningTasksKilled(/server stopped/);
    // Before the run's final status, which ends a follower's stream.
    const events = await store.listEvents({ runId: run.id, after: 0, limit: 100 });
    expect(events.at(-1)?.data).toMatchObject({ type: 'run.status', status: 'interrupted' });
  });

  it('ends them killed, with an event each, when another worker takes the run over', async () => {
    const taken = await takeOverRun({ store, hub, run, failovers: 1, maxFailovers: 3 });
    expect(taken?.input.kind).toBe('resume');
    await expectRunningTasksKilled(/stopped answering/);
  });

  it('ends them killed when a takeover fails the run past the limit', async () => {
    expect(await takeOverRun({ store, hub, run, failovers: 4, maxFailovers: 3 })).toBeUndefined();
    await expectRunningTasksKilled(/stopped answering/);
    expect((await store.getRun(run.id))?.status).toBe('failed');
  });

  it.each(['resumed', 'messaged'])(
    'ends them killed when an interrupted run that still has them (stored by an earlier build) is %s',
    async (how) => {
      // An earlier build marked the run interrupted and left its tasks running.
      await store.transitionRun({
        runId: run.id,
        from: ['running'],
        patch: { status: 'interrupted', pending: null },
      });
      const service = newService();
      if (how === 'resumed') await service.resume(run.id, undefined);
      else await service.sendMessage(run.id, 'go on');
      await expectRunningTasksKilled(/server stopped/);
      expect((await store.getRun(run.id))?.status).toBe('queued');
    },
  );
});
