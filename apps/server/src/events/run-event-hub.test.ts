import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEventData } from '../http/schemas.js';
import type { KyselyRunStore } from '../store/kysely-run-store.js';
import { sampleRun } from '../store/run-store-contract.js';
import type { StoredEvent } from '../store/run-store.js';
import { openSqliteRunStore } from '../store/sqlite-run-store.js';
import { followRunEvents, hasNothingToFollow } from './follow-run-events.js';
import { MOST_HELD_EVENTS, RunEventHub } from './run-event-hub.js';

const progress = (count: number): RunEventData => ({
  type: 'agent.progress',
  agentId: 'a1',
  timestamp: new Date().toISOString(),
  messageCount: count,
  toolUseCount: 0,
  tokens: 1,
});

const status = (value: 'queued' | 'running' | 'completed'): RunEventData => ({
  type: 'run.status',
  status: value,
});

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('RunEventHub and followRunEvents', () => {
  let directory: string;
  let store: KyselyRunStore;
  let runId: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'delegate-hub-'));
    store = openSqliteRunStore({ path: join(directory, 'runs.sqlite') });
    await store.migrate();
    runId = (await store.createRun(sampleRun())).id;
  });
  afterEach(async () => {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('numbers events in publish order and hands them out only once they are stored', async () => {
    const hub = new RunEventHub({ store });
    const checks: Promise<boolean>[] = [];
    hub.subscribe(runId, (event) => {
      checks.push(
        store
          .listEvents({ runId, after: event.seq - 1, limit: 1 })
          .then((rows) => rows[0]?.seq === event.seq),
      );
    });
    const published = await Promise.all(
      Array.from({ length: 50 }, (_, index) => hub.publish(runId, progress(index))),
    );
    expect(published.map((event) => event?.seq)).toEqual(published.map((_, index) => index + 1));
    expect(await Promise.all(checks)).toEqual(published.map(() => true));
    const stored = await store.listEvents({ runId, after: 0, limit: 100 });
    expect(stored.map((event) => (event.data as { messageCount: number }).messageCount)).toEqual(
      published.map((_, index) => index),
    );
  });

  it('continues the numbering of an existing log and removes secrets before storing', async () => {
    const first = new RunEventHub({ store });
    await first.publish(runId, status('queued'));
    const second = new RunEventHub({
      store,
      redact: (data) =>
        JSON.parse(JSON.stringify(data).replaceAll('secret-value', '[REDACTED]')) as RunEventData,
    });
    const event = await second.publish(runId, {
      type: 'run.input',
      kind: 'message',
      text: 'my secret-value',
    });
    expect(event?.seq).toBe(2);
    const [stored] = await store.listEvents({ runId, after: 1, limit: 1 });
    expect(stored?.data).toEqual({ type: 'run.input', kind: 'message', text: 'my [REDACTED]' });
  });

  it('reports a refused batch, delivers none of it, and leaves no gap after it', async () => {
    const errors: unknown[] = [];
    let refuse = true;
    const flaky = Object.create(store) as KyselyRunStore;
    flaky.appendEvents = async (events) => {
      if (refuse) {
        refuse = false;
        throw new Error('disk full');
      }
      return store.appendEvents(events);
    };
    const hub = new RunEventHub({
      store: flaky,
      onWriteError: (_run, error) => errors.push(error),
    });
    const seen: number[] = [];
    hub.subscribe(runId, (event) => seen.push(event.seq));
    expect(await hub.publish(runId, progress(1))).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect((await hub.publish(runId, progress(2)))?.seq).toBe(1);
    expect(seen).toEqual([1]);
  });

  /** `store`, whose appends fail with a refused connection while `down()` says so. */
  function storeDownWhile(down: () => boolean): KyselyRunStore {
    const flaky = Object.create(store) as KyselyRunStore;
    flaky.appendEvents = async (events) => {
      if (down()) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return store.appendEvents(events);
    };
    return flaky;
  }

  it('holds the events of a store out of reach and writes them, in order and without a gap, once it answers', async () => {
    let failures = 0;
    const attempts: number[] = [];
    const errors: unknown[] = [];
    const hub = new RunEventHub({
      store: storeDownWhile(() => failures++ < 2),
      onRetry: (_run, _error, attempt) => attempts.push(attempt),
      onWriteError: (_run, error) => errors.push(error),
    });
    const seen: number[] = [];
    hub.subscribe(runId, (event) => seen.push(event.data.messageCount as number));
    const first = hub.publish(runId, progress(1));
    await pause(100);
    expect(hub.hasPending(runId)).toBe(true);
    const later = [hub.publish(runId, progress(2)), hub.publish(runId, progress(3))];
    const stored = await Promise.all([first, ...later]);
    expect(stored.map((event) => event?.seq)).toEqual([1, 2, 3]);
    expect(seen).toEqual([1, 2, 3]);
    expect(attempts).toEqual([1, 2]);
    expect(errors).toEqual([]);
    expect((await store.listEvents({ runId, after: 0, limit: 10 })).map((e) => e.seq)).toEqual([
      1, 2, 3,
    ]);
  });

  it('stores a batch once when the store took it but its answer was lost', async () => {
    let lose = 1;
    const flaky = Object.create(store) as KyselyRunStore;
    flaky.appendEvents = async (events) => {
      await store.appendEvents(events);
      if (lose-- > 0) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    };
    const hub = new RunEventHub({ store: flaky });
    const seen: number[] = [];
    hub.subscribe(runId, (event) => seen.push(event.seq));
    const stored = await Promise.all([
      hub.publish(runId, progress(1)),
      hub.publish(runId, progress(2)),
    ]);
    expect(stored.map((event) => event?.seq)).toEqual([1, 2]);
    expect((await hub.publish(runId, progress(3)))?.seq).toBe(3);
    expect(seen).toEqual([1, 2, 3]);
    const log = await store.listEvents({ runId, after: 0, limit: 10 });
    expect(log.map((event) => [event.seq, event.data.messageCount])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
  });

  it('drops what it holds for a run on discard, and for every run when a flush gives up', async () => {
    const errors: unknown[] = [];
    const hub = new RunEventHub({
      store: storeDownWhile(() => true),
      onWriteError: (_run, error) => errors.push(error),
    });
    const discarded = hub.publish(runId, progress(1));
    await pause(50);
    hub.discard(runId);
    expect(await discarded).toBeUndefined();
    const held = hub.publish(runId, progress(2));
    await hub.flushAll({ giveUpAfterMs: 100 });
    expect(await held).toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(await store.listEvents({ runId, after: 0, limit: 10 })).toEqual([]);
  });

  it('never writes a batch that was being written when the run was discarded, once the store answers', async () => {
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    let down = true;
    const flaky = Object.create(store) as KyselyRunStore;
    flaky.appendEvents = async (events) => {
      if (down) {
        await stuck;
        throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
      }
      return store.appendEvents(events);
    };
    const hub = new RunEventHub({ store: flaky });
    const held = hub.publish(runId, progress(1));
    await pause(20);
    // Another worker holds the run now; its write of the same batch fails afterwards.
    hub.discard(runId);
    down = false;
    release();
    expect(await held).toBeUndefined();
    await hub.flush(runId);
    expect(await store.listEvents({ runId, after: 0, limit: 10 })).toEqual([]);
  });

  it('gives up on a write that hangs when a flush gives up', async () => {
    const flaky = Object.create(store) as KyselyRunStore;
    flaky.appendEvents = () => new Promise<void>(() => undefined);
    const hub = new RunEventHub({ store: flaky });
    void hub.publish(runId, progress(1));
    await pause(20);
    await expect(hub.flushAll({ giveUpAfterMs: 50 })).resolves.toBeUndefined();
  });

  it(`holds at most ${MOST_HELD_EVENTS} events of a run and says once that it drops the rest`, async () => {
    let down = true;
    const errors: unknown[] = [];
    const hub = new RunEventHub({
      store: storeDownWhile(() => down),
      onWriteError: (_run, error) => errors.push(error),
    });
    const first = hub.publish(runId, progress(0));
    await pause(50);
    const rest = Array.from({ length: MOST_HELD_EVENTS + 5 }, (_, index) =>
      hub.publish(runId, progress(index + 1)),
    );
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/later ones are dropped until it answers/);
    down = false;
    const stored = await Promise.all([first, ...rest]);
    expect(stored.filter((event) => event !== undefined)).toHaveLength(MOST_HELD_EVENTS);
    expect(stored.slice(MOST_HELD_EVENTS)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('gives followers that join at any point every event after their position once, in order', async () => {
    const hub = new RunEventHub({ store });
    await hub.publish(runId, status('queued'));
    await hub.publish(runId, status('running'));
    const total = 300;
    const followers: Promise<{ after: number; seqs: number[] }>[] = [];
    const follow = (after: number) =>
      (async () => {
        const seqs: number[] = [];
        for await (const event of followRunEvents({
          store,
          hub,
          runId,
          after,
          signal: new AbortController().signal,
        })) {
          seqs.push(event.seq);
        }
        return { after, seqs };
      })();
    for (let index = 0; index < total; index++) {
      void hub.publish(runId, progress(index));
      if (index % 25 === 0) {
        await pause(1);
        // Joining mid-stream, from the start, from the last seq, and from a position not yet reached.
        followers.push(follow(0), follow(index), follow(index + 10));
      }
    }
    await hub.publish(runId, status('completed'));
    const last = total + 3;
    for (const { after, seqs } of await Promise.all(followers)) {
      const expected = Array.from(
        { length: Math.max(0, last - after) },
        (_, offset) => after + 1 + offset,
      );
      expect(seqs, `from ${after}`).toEqual(expected);
    }
    expect(await hasNothingToFollow({ store, hub, runId, after: last })).toBe(true);
    expect(await hasNothingToFollow({ store, hub, runId, after: last - 1 })).toBe(false);
  });

  it('ends a follower when its signal aborts and keeps an active run open otherwise', async () => {
    const hub = new RunEventHub({ store });
    await hub.publish(runId, status('running'));
    const controller = new AbortController();
    const received: StoredEvent[] = [];
    const following = (async () => {
      for await (const event of followRunEvents({
        store,
        hub,
        runId,
        after: 0,
        signal: controller.signal,
      }))
        received.push(event);
    })();
    await pause(30);
    expect(await hasNothingToFollow({ store, hub, runId, after: 1 })).toBe(false);
    await hub.publish(runId, progress(1));
    await pause(10);
    controller.abort();
    await following;
    expect(received.map((event) => event.seq)).toEqual([1, 2]);
    expect(hub.subscriberCount(runId)).toBe(0);
  });
});
