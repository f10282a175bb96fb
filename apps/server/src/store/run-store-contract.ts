import { emptyUsage } from '@delegate/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRecord, NewRun, RunStore, StoredEvent } from './run-store.js';

/** Opens a fresh, migrated store; `reopen` opens the same data again (after `close`). */
export type RunStoreFactory = () => Promise<{
  store: RunStore;
  reopen: () => Promise<RunStore>;
  cleanup: () => Promise<void>;
}>;

let counter = 0;

/** A new run with distinct id and creation time. */
export function sampleRun(overrides: Partial<NewRun> = {}): NewRun {
  counter += 1;
  const id = overrides.id ?? `run_${String(counter).padStart(24, '0')}`;
  return {
    id,
    status: 'queued',
    prompt: `prompt ${counter}`,
    options: { fork: true, permissionMode: 'default' },
    workspace: '/work/space',
    sessionId: id,
    transcriptDir: '/data/transcripts',
    pending: { kind: 'start' },
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString(),
    ...overrides,
  };
}

/** An agent record for tests (running; `main`, or a background sub-agent). */
export function sampleAgent(
  runId: string,
  agentId: string,
  overrides: Partial<AgentRecord> = {},
): AgentRecord {
  return {
    runId,
    agentId,
    parentAgentId: agentId === 'main' ? null : 'main',
    agentType: agentId === 'main' ? 'main' : 'general-purpose',
    description: `agent ${agentId}`,
    mode: agentId === 'main' ? 'main' : 'background',
    backgrounded: agentId !== 'main',
    model: 'claude-sonnet-4-5',
    color: null,
    status: 'running',
    currentTool: null,
    lastActivity: null,
    taskId: null,
    toolUseCount: 0,
    usage: emptyUsage(),
    costUsd: 0,
    priced: true,
    transcriptPath: null,
    startedAt: new Date().toISOString(),
    endedAt: null,
    error: null,
    ...overrides,
  } satisfies AgentRecord;
}

function event(runId: string, seq: number, type = 'agent.progress'): StoredEvent {
  return {
    runId,
    seq,
    type,
    agentId: 'main',
    time: new Date().toISOString(),
    data: { type, seq, text: 'ünïcödé ✓' },
  };
}

/**
 * The behaviour every `RunStore` must have. Each implementation's test file calls this
 * with a factory for its own store (SQLite here; PostgreSQL in the scale-out).
 */
export function describeRunStoreContract(name: string, factory: RunStoreFactory): void {
  describe(`RunStore contract: ${name}`, () => {
    let store: RunStore;
    let reopen: () => Promise<RunStore>;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, reopen, cleanup } = await factory());
    });
    afterEach(async () => {
      await store.close().catch(() => undefined);
      await cleanup();
    });

    it('creates and reads a run with its options', async () => {
      const run = sampleRun();
      const created = await store.createRun(run);
      expect(created).toMatchObject({ ...run, result: null, error: null, endedAt: null });
      expect(await store.getRun(run.id)).toEqual(created);
      expect(await store.getRun('run_missing')).toBeUndefined();
    });

    it('refuses a second run with the same id', async () => {
      const run = sampleRun();
      await store.createRun(run);
      await expect(store.createRun(run)).rejects.toThrow(/already exists/);
    });

    it('pages runs newest first and filters by status', async () => {
      const runs = [];
      for (let index = 0; index < 5; index++) runs.push(await store.createRun(sampleRun()));
      await store.transitionRun({
        runId: runs[1]!.id,
        from: ['queued'],
        patch: { status: 'completed' },
      });
      const first = await store.listRuns({ limit: 2 });
      expect(first.runs.map((run) => run.id)).toEqual([runs[4]!.id, runs[3]!.id]);
      expect(first.nextCursor).not.toBeNull();
      const second = await store.listRuns({ limit: 2, cursor: first.nextCursor! });
      expect(second.runs.map((run) => run.id)).toEqual([runs[2]!.id, runs[1]!.id]);
      const third = await store.listRuns({ limit: 2, cursor: second.nextCursor! });
      expect(third.runs.map((run) => run.id)).toEqual([runs[0]!.id]);
      expect(third.nextCursor).toBeNull();
      const completed = await store.listRuns({ limit: 10, status: 'completed' });
      expect(completed.runs.map((run) => run.id)).toEqual([runs[1]!.id]);
    });

    it('rejects a cursor it did not make, naming the field', async () => {
      await expect(store.listRuns({ limit: 2, cursor: 'not-a-cursor' })).rejects.toThrow(/cursor/);
    });

    it('changes a run only from the expected status (one of two racing changes wins)', async () => {
      const run = await store.createRun(sampleRun());
      const [start, cancel] = await Promise.all([
        store.transitionRun({
          runId: run.id,
          from: ['queued'],
          patch: { status: 'running', pending: null, startedAt: '2026-01-01T00:00:00.000Z' },
        }),
        store.transitionRun({ runId: run.id, from: ['queued'], patch: { status: 'cancelled' } }),
      ]);
      expect([start, cancel].filter((result) => result !== undefined)).toHaveLength(1);
      const wrong = await store.transitionRun({
        runId: run.id,
        from: ['queued'],
        patch: { status: 'failed' },
      });
      expect(wrong).toBeUndefined();
      const stored = await store.getRun(run.id);
      expect(['running', 'cancelled']).toContain(stored?.status);
      expect(
        await store.transitionRun({ runId: 'run_missing', from: ['queued'], patch: {} }),
      ).toBeUndefined();
    });

    it('stores results and errors and lists runs by status', async () => {
      const a = await store.createRun(sampleRun());
      const b = await store.createRun(sampleRun());
      await store.transitionRun({ runId: a.id, from: ['queued'], patch: { status: 'running' } });
      const failed = await store.transitionRun({
        runId: b.id,
        from: ['queued'],
        patch: {
          status: 'failed',
          result: 'partial',
          error: { code: 'API_ERROR', message: 'boom' },
          endedAt: '2026-01-02T00:00:00.000Z',
        },
      });
      expect(failed).toMatchObject({
        status: 'failed',
        result: 'partial',
        error: { code: 'API_ERROR', message: 'boom' },
        endedAt: '2026-01-02T00:00:00.000Z',
      });
      expect(await store.runIdsWithStatus(['running'])).toEqual([a.id]);
      expect(await store.runIdsWithStatus(['running', 'failed'])).toEqual([a.id, b.id]);
    });

    it('keeps an agent tree in first-seen order while agents are updated', async () => {
      const run = await store.createRun(sampleRun());
      await store.upsertAgent(sampleAgent(run.id, 'main', { mode: 'main' }));
      await store.upsertAgent(sampleAgent(run.id, 'a1'));
      await store.upsertAgent(sampleAgent(run.id, 'a2'));
      const usage = { ...emptyUsage(), input_tokens: 10, cache_read_input_tokens: 5 };
      await store.upsertAgent(
        sampleAgent(run.id, 'a1', {
          status: 'cancelled',
          usage,
          costUsd: 0.5,
          currentTool: null,
          error: 'stopped',
          endedAt: '2026-01-01T00:00:09.000Z',
        }),
      );
      const agents = await store.listAgents(run.id);
      expect(agents.map((agent) => agent.agentId)).toEqual(['main', 'a1', 'a2']);
      expect(agents[1]).toMatchObject({
        status: 'cancelled',
        usage,
        costUsd: 0.5,
        error: 'stopped',
        backgrounded: true,
        priced: true,
      });
      expect(agents[0]?.parentAgentId).toBeNull();
      expect(await store.listAgents('run_missing')).toEqual([]);
    });

    it('gives back a lone surrogate (half of a UTF-16 pair) of a run or an agent as one U+FFFD, and of an event as it was', async () => {
      const run = await store.createRun(sampleRun({ prompt: 'cut \ud83d here' }));
      await store.upsertAgent(sampleAgent(run.id, 'main', { lastActivity: 'Read: \udc00' }));
      await store.appendEvents([
        { ...event(run.id, 1), data: { type: 'agent.progress', text: 'x\ud800y' } },
      ]);
      expect((await store.getRun(run.id))?.prompt).toBe('cut \ufffd here');
      expect((await store.listAgents(run.id))[0]?.lastActivity).toBe('Read: \ufffd');
      // Event data is stored as JSON text, which escapes it (\ud800): it reads back as it was sent.
      const [stored] = await store.listEvents({ runId: run.id, after: 0, limit: 10 });
      expect(stored?.data.text).toBe('x\ud800y');
    });

    it('keeps tasks', async () => {
      const run = await store.createRun(sampleRun());
      const task = {
        runId: run.id,
        taskId: 't1',
        agentId: 'a1',
        type: 'local_agent',
        description: 'work',
        status: 'running',
        backgrounded: false,
        startedAt: '2026-01-01T00:00:00.000Z',
        endedAt: null,
      };
      await store.upsertTask(task);
      await store.upsertTask({ ...task, taskId: 't2' });
      await store.upsertTask({ ...task, status: 'killed', endedAt: '2026-01-01T00:00:01.000Z' });
      const tasks = await store.listTasks(run.id);
      expect(tasks.map((item) => [item.taskId, item.status])).toEqual([
        ['t1', 'killed'],
        ['t2', 'running'],
      ]);
      const other = await store.createRun(sampleRun());
      await store.upsertTask({ ...task, runId: other.id, taskId: 't3', status: 'completed' });
      expect(await store.runIdsWithRunningTasks()).toEqual([run.id]);
      await store.upsertTask({ ...task, runId: other.id, taskId: 't4' });
      expect((await store.runIdsWithRunningTasks()).sort()).toEqual([run.id, other.id].sort());
    });

    it('appends events and replays them after a position', async () => {
      const run = await store.createRun(sampleRun());
      expect(await store.lastEventSeq(run.id)).toBe(0);
      const events = Array.from({ length: 250 }, (_, index) => event(run.id, index + 1));
      events[9] = event(run.id, 10, 'run.status');
      await store.appendEvents(events.slice(0, 120));
      await store.appendEvents(events.slice(120));
      expect(await store.lastEventSeq(run.id)).toBe(250);
      const page = await store.listEvents({ runId: run.id, after: 5, limit: 3 });
      expect(page.map((item) => item.seq)).toEqual([6, 7, 8]);
      expect(page[0]?.data).toEqual(events[5]?.data);
      const all = await store.listEvents({ runId: run.id, after: 0, limit: 1_000 });
      expect(all.map((item) => item.seq)).toEqual(events.map((item) => item.seq));
      expect((await store.lastEventOfType({ runId: run.id, type: 'run.status' }))?.seq).toBe(10);
      expect(
        await store.lastEventOfType({ runId: run.id, type: 'run.status', atOrBefore: 9 }),
      ).toBeUndefined();
    });

    it('refuses an event position that is already taken and keeps the log as it was', async () => {
      const run = await store.createRun(sampleRun());
      await store.appendEvents([event(run.id, 1), event(run.id, 2)]);
      await expect(store.appendEvents([event(run.id, 3), event(run.id, 2)])).rejects.toThrow();
      const all = await store.listEvents({ runId: run.id, after: 0, limit: 10 });
      expect(all.map((item) => item.seq)).toEqual([1, 2]);
    });

    it('keeps transcript pieces by file and offset, a later piece at one offset replacing it', async () => {
      const run = await store.createRun(sampleRun());
      const main = `${run.id}.jsonl`;
      const agent = `${run.id}/agents/a1.jsonl`;
      await store.saveTranscriptChunks([
        { runId: run.id, file: main, offset: 0, content: '{"a":1}\n' },
        { runId: run.id, file: agent, offset: 0, content: '{"ü":"✓"}\n' },
      ]);
      await store.saveTranscriptChunks([
        { runId: run.id, file: main, offset: 8, content: '{"b":2}\n' },
        { runId: run.id, file: `${run.id}/agents/a1.meta.json`, offset: 0, content: '{}' },
      ]);
      await store.saveTranscriptChunks([
        { runId: run.id, file: `${run.id}/agents/a1.meta.json`, offset: 0, content: '{"x":1}' },
      ]);
      const chunks = await store.listTranscriptChunks(run.id);
      const byFile = (file: string) =>
        chunks.filter((chunk) => chunk.file === file).map((chunk) => [chunk.offset, chunk.content]);
      expect(chunks).toHaveLength(4);
      expect(byFile(main)).toEqual([
        [0, '{"a":1}\n'],
        [8, '{"b":2}\n'],
      ]);
      expect(byFile(agent)).toEqual([[0, '{"ü":"✓"}\n']]);
      expect(byFile(`${run.id}/agents/a1.meta.json`)).toEqual([[0, '{"x":1}']]);
      expect(await store.listTranscriptChunks('run_missing')).toEqual([]);
    });

    it('keeps everything across a close and reopen, and migrating again changes nothing', async () => {
      const run = await store.createRun(sampleRun());
      await store.appendEvents([event(run.id, 1)]);
      await store.upsertAgent(sampleAgent(run.id, 'main', { mode: 'main' }));
      await store.close();
      store = await reopen();
      await store.migrate();
      await store.ping();
      expect((await store.getRun(run.id))?.prompt).toBe(run.prompt);
      expect(await store.lastEventSeq(run.id)).toBe(1);
      expect((await store.listAgents(run.id)).map((agent) => agent.agentId)).toEqual(['main']);
    });
  });
}
