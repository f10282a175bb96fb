import type { RunEventData } from '../http/schemas.js';
import type { EventsAppended, RunStore, StoredEvent } from '../store/run-store.js';

type Listener = (event: StoredEvent) => void;

/** Events read per query when catching up after the append watch was lost. */
const CATCH_UP_PAGE = 500;

type RunLog = {
  /** Next seq to assign; unknown until loaded from the store. */
  nextSeq: number | undefined;
  /** Events waiting to be written. */
  pending: {
    data: RunEventData;
    time: string;
    resolve: (event: StoredEvent | undefined) => void;
  }[];
  /** The write in progress (writes of one run never overlap, so the log stays in order). */
  writing: Promise<void> | undefined;
  listeners: Set<Listener>;
  /** Events taken for the write in progress and not yet delivered. */
  undelivered: number;
  /** Holders that keep the log (and its next seq) in memory while a run works. */
  holds: number;
  /** Highest seq handed to listeners (events written by other processes are fetched after it). */
  delivered: number;
  /** Fetches of events other processes wrote, in order. */
  fetching: Promise<void>;
};

/** True when the store refused the batch because another writer took one of its positions. */
function isPositionTaken(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  // PostgreSQL unique_violation; SQLite primary-key constraint.
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/**
 * The event log of every run: assigns each event the next `seq` of its run, writes it to
 * the store, and only then hands it to live subscribers. A subscriber therefore never sees
 * an event that a crash could lose, and a replay from the store never misses one a live
 * subscriber saw. Events emitted together are written in one transaction.
 */
export class RunEventHub {
  private readonly store: RunStore;
  private readonly redact: (data: RunEventData) => RunEventData;
  private readonly onWriteError: (runId: string, error: unknown) => void;
  private readonly logs = new Map<string, RunLog>();

  constructor(options: {
    store: RunStore;
    /** Removes secrets from an event before it is stored or sent. */
    redact?: (data: RunEventData) => RunEventData;
    /** Called when the store refuses a batch (those events are dropped, not retried). */
    onWriteError?: (runId: string, error: unknown) => void;
  }) {
    this.store = options.store;
    this.redact = options.redact ?? ((data) => data);
    this.onWriteError = options.onWriteError ?? (() => undefined);
  }

  /**
   * Appends an event to a run's log; resolves with it once it is stored and delivered, or
   * with undefined when the store refused it (reported to `onWriteError`).
   */
  publish(runId: string, data: RunEventData): Promise<StoredEvent | undefined> {
    const log = this.log(runId);
    const time = new Date().toISOString();
    const stored = new Promise<StoredEvent | undefined>((resolve) => {
      log.pending.push({ data: this.redact(data), time, resolve });
    });
    this.schedule(runId, log);
    return stored;
  }

  /** Keeps a run's log in memory (no seq look-up per batch) until the returned release. */
  retain(runId: string): () => void {
    const log = this.log(runId);
    log.holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      log.holds -= 1;
      this.release(runId, log);
    };
  }

  /** Calls `listener` for each event of the run stored from now on; returns an unsubscribe. */
  subscribe(runId: string, listener: Listener): () => void {
    const log = this.log(runId);
    log.listeners.add(listener);
    return () => {
      log.listeners.delete(listener);
      this.release(runId, log);
    };
  }

  /** True while events of the run are waiting to be written. */
  hasPending(runId: string): boolean {
    const log = this.logs.get(runId);
    return log !== undefined && (log.pending.length > 0 || log.undelivered > 0);
  }

  /** Resolves when every event published so far for the run is stored and delivered. */
  async flush(runId: string): Promise<void> {
    const log = this.logs.get(runId);
    while (log?.writing) await log.writing;
  }

  /** Resolves when every run's events are stored. */
  async flushAll(): Promise<void> {
    await Promise.all([...this.logs.keys()].map((runId) => this.flush(runId)));
  }

  /** Number of live subscribers of a run. */
  subscriberCount(runId: string): number {
    return this.logs.get(runId)?.listeners.size ?? 0;
  }

  private log(runId: string): RunLog {
    let log = this.logs.get(runId);
    if (!log) {
      log = {
        nextSeq: undefined,
        pending: [],
        writing: undefined,
        listeners: new Set(),
        undelivered: 0,
        holds: 0,
        delivered: 0,
        fetching: Promise.resolve(),
      };
      this.logs.set(runId, log);
    }
    return log;
  }

  private schedule(runId: string, log: RunLog): void {
    if (log.writing) return;
    log.writing = this.drain(runId, log).finally(() => {
      log.writing = undefined;
      if (log.pending.length > 0) this.schedule(runId, log);
      else this.release(runId, log);
    });
  }

  private async drain(runId: string, log: RunLog, retry = true): Promise<void> {
    // Let events emitted in the same tick join this batch.
    await Promise.resolve();
    const batch = log.pending.splice(0, log.pending.length);
    if (batch.length === 0) return;
    log.undelivered = batch.length;
    try {
      log.nextSeq ??= (await this.store.lastEventSeq(runId)) + 1;
      const events: StoredEvent[] = batch.map((entry, index) => ({
        runId,
        seq: log.nextSeq! + index,
        type: entry.data.type,
        agentId: 'agentId' in entry.data ? entry.data.agentId : null,
        time: entry.time,
        data: entry.data as Record<string, unknown>,
      }));
      await this.store.appendEvents(events);
      log.nextSeq += events.length;
      log.undelivered = 0;
      for (const [index, event] of events.entries()) {
        this.deliver(log, event);
        batch[index]!.resolve(event);
      }
    } catch (error) {
      // The seq is reloaded next time, so the log has no gap.
      log.nextSeq = undefined;
      log.undelivered = 0;
      // Another process appended since this one read the log's end: try again once with the
      // end read afresh.
      if (retry && isPositionTaken(error)) {
        log.pending.unshift(...batch);
        return this.drain(runId, log, false);
      }
      this.onWriteError(runId, error);
      for (const entry of batch) entry.resolve(undefined);
    }
  }

  private deliver(log: RunLog, event: StoredEvent): void {
    log.delivered = Math.max(log.delivered, event.seq);
    for (const listener of log.listeners) {
      try {
        listener(event);
      } catch {
        // One broken subscriber must not starve the others.
      }
    }
  }

  /**
   * Another process appended `firstSeq`…`lastSeq` to a run's log (a shared store's
   * notification): subscribers of this process get those events from the store.
   */
  appendedElsewhere(append: EventsAppended): void {
    const { runId, firstSeq, lastSeq } = append;
    const log = this.logs.get(runId);
    if (!log || log.listeners.size === 0) return;
    log.fetching = log.fetching.then(async () => {
      if (lastSeq <= log.delivered) return;
      try {
        const after = log.delivered === 0 ? firstSeq - 1 : log.delivered;
        const events = await this.store.listEvents({ runId, after, limit: lastSeq - after });
        for (const event of events) this.deliver(log, event);
      } catch (error) {
        this.onWriteError(runId, error);
      }
    });
  }

  /**
   * The watch of other processes' appends was lost for a while: every run followed here gets
   * what was stored after the last event it was handed, so no follower misses one.
   */
  catchUp(): void {
    for (const [runId, log] of this.logs) {
      if (log.listeners.size === 0) continue;
      log.fetching = log.fetching.then(async () => {
        try {
          for (;;) {
            const events = await this.store.listEvents({
              runId,
              after: log.delivered,
              limit: CATCH_UP_PAGE,
            });
            for (const event of events) this.deliver(log, event);
            if (events.length < CATCH_UP_PAGE) return;
          }
        } catch (error) {
          this.onWriteError(runId, error);
        }
      });
    }
  }

  private release(runId: string, log: RunLog): void {
    // Forget idle runs so the map does not grow with every run ever seen.
    if (log.holds === 0 && log.listeners.size === 0 && log.pending.length === 0 && !log.writing)
      if (this.logs.get(runId) === log) this.logs.delete(runId);
  }
}
