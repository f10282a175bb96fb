import type { RunEventData } from '../http/schemas.js';
import type { EventsAppended, RunStore, StoredEvent } from '../store/run-store.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';

type Listener = (event: StoredEvent) => void;

/** Events read per query when catching up after the append watch was lost. */
const CATCH_UP_PAGE = 500;

/** First pause before events the store could not be reached for are written again, in ms. */
const FIRST_RETRY_PAUSE_MS = 500;
/** Longest pause between two attempts, in ms. */
const LONGEST_RETRY_PAUSE_MS = 10_000;
/** Most events of one run held in memory while the store cannot be reached. */
export const MOST_HELD_EVENTS = 10_000;

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
  /** Writes that failed in a row because the store could not be reached (0 once one succeeds). */
  failures: number;
  /** Ends the pause before the next attempt at once (a discard, a give-up). */
  wake: (() => void) | undefined;
  /** Set once events were dropped because too many were held: reported once. */
  overflowed: boolean;
  /**
   * The positions of a batch whose append failed as the store went out of reach: it may have
   * been stored before the answer was lost. Checked before the batch is written again.
   */
  inDoubt: { firstSeq: number; count: number } | undefined;
  /** Counts the discards: a batch whose write began before one is never written again. */
  discards: number;
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

  private readonly onRetry: (runId: string, error: unknown, attempt: number) => void;
  private readonly isUnavailable: (error: unknown) => boolean;
  /** Set by a flush that gives up: failed writes are dropped instead of held. */
  private givingUp = false;

  constructor(options: {
    store: RunStore;
    /** Removes secrets from an event before it is stored or sent. */
    redact?: (data: RunEventData) => RunEventData;
    /** Called when the store refuses a batch (those events are dropped, not retried). */
    onWriteError?: (runId: string, error: unknown) => void;
    /**
     * Called when a batch could not be written because the store is out of reach: the events
     * are held (at most {@link MOST_HELD_EVENTS} a run) and written again after a pause,
     * 0.5 s doubling to 10 s. `attempt` counts the failures in a row.
     */
    onRetry?: (runId: string, error: unknown, attempt: number) => void;
    /** Tells an out-of-reach store from a refused write; default `isStoreUnavailable`. */
    isUnavailable?: (error: unknown) => boolean;
  }) {
    this.store = options.store;
    this.redact = options.redact ?? ((data) => data);
    this.onWriteError = options.onWriteError ?? (() => undefined);
    this.onRetry = options.onRetry ?? (() => undefined);
    this.isUnavailable = options.isUnavailable ?? isStoreUnavailable;
  }

  /**
   * Appends an event to a run's log; resolves with it once it is stored and delivered, or
   * with undefined when the store refused it (reported to `onWriteError`).
   */
  publish(runId: string, data: RunEventData): Promise<StoredEvent | undefined> {
    const log = this.log(runId);
    const time = new Date().toISOString();
    // The batch being written counts too: both are held in memory.
    if (log.failures > 0 && log.pending.length + log.undelivered >= MOST_HELD_EVENTS) {
      if (!log.overflowed) {
        log.overflowed = true;
        this.onWriteError(
          runId,
          new Error(
            `${MOST_HELD_EVENTS} events of the run wait for the store already; later ones are dropped until it answers`,
          ),
        );
      }
      return Promise.resolve(undefined);
    }
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

  /**
   * Resolves when every run's events are stored. With `giveUpAfterMs`, events still held for
   * an out-of-reach store after that long are dropped (reported to `onWriteError`) instead:
   * for a shutdown, which must end.
   */
  async flushAll(options: { giveUpAfterMs?: number } = {}): Promise<void> {
    const flushed = Promise.all([...this.logs.keys()].map((runId) => this.flush(runId)));
    if (options.giveUpAfterMs === undefined) {
      await flushed;
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.giveUp();
        resolve();
      }, options.giveUpAfterMs);
    });
    try {
      // A write that hangs (a silent network) is not waited for past the deadline either:
      // what it and the rest hold is dropped, and a later answer adds nothing.
      await Promise.race([flushed, deadline]);
    } finally {
      clearTimeout(timer);
      if (this.givingUp) this.dropEverything();
      this.givingUp = false;
    }
  }

  /**
   * Drops the run's events that wait to be written (a worker that lost the run to another
   * must not add to its log once the store answers again); each resolves undefined.
   */
  discard(runId: string): void {
    const log = this.logs.get(runId);
    if (!log) return;
    for (const entry of log.pending.splice(0)) entry.resolve(undefined);
    log.failures = 0;
    log.inDoubt = undefined;
    log.discards += 1;
    log.wake?.();
  }

  private giveUp(): void {
    this.givingUp = true;
    for (const log of this.logs.values()) log.wake?.();
  }

  /**
   * Drops what every run holds (reported to `onWriteError`); a batch being written is dropped
   * when its write fails, never written again.
   */
  private dropEverything(): void {
    for (const [runId, log] of [...this.logs]) {
      const held = log.pending.length + log.undelivered;
      if (held === 0) continue;
      this.onWriteError(
        runId,
        new Error(`gave up on ${held} events: the store did not take them before the shutdown`),
      );
      this.discard(runId);
    }
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
        failures: 0,
        wake: undefined,
        overflowed: false,
        inDoubt: undefined,
        discards: 0,
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
    let attempted: RunLog['inDoubt'];
    const discards = log.discards;
    try {
      if (log.inDoubt) await this.settleInDoubt(runId, log, batch);
      if (batch.length === 0) {
        log.undelivered = 0;
        return;
      }
      log.nextSeq ??= (await this.store.lastEventSeq(runId)) + 1;
      const events: StoredEvent[] = batch.map((entry, index) => ({
        runId,
        seq: log.nextSeq! + index,
        type: entry.data.type,
        agentId: 'agentId' in entry.data ? entry.data.agentId : null,
        time: entry.time,
        data: entry.data as Record<string, unknown>,
      }));
      attempted = { firstSeq: log.nextSeq, count: events.length };
      await this.store.appendEvents(events);
      log.nextSeq += events.length;
      log.undelivered = 0;
      log.failures = 0;
      log.overflowed = false;
      for (const [index, event] of events.entries()) {
        this.deliver(log, event);
        batch[index]!.resolve(event);
      }
    } catch (error) {
      // The seq is reloaded next time, so the log has no gap.
      log.nextSeq = undefined;
      log.undelivered = 0;
      // Discarded while it was being written (the run is another worker's now): dropped.
      if (log.discards !== discards) {
        for (const entry of batch) entry.resolve(undefined);
        return;
      }
      // Another process appended since this one read the log's end: try again once with the
      // end read afresh.
      if (retry && isPositionTaken(error)) {
        log.pending.unshift(...batch);
        return this.drain(runId, log, false);
      }
      // The store is out of reach: hold the batch, in front of what came since, and try again
      // after a pause (schedule starts the next drain).
      if (!this.givingUp && this.isUnavailable(error)) {
        log.pending.unshift(...batch);
        log.inDoubt ??= attempted;
        log.failures += 1;
        this.onRetry(runId, error, log.failures);
        return this.pauseBeforeRetry(log);
      }
      this.onWriteError(runId, error);
      for (const entry of batch) entry.resolve(undefined);
    }
  }

  /**
   * The batch at the front of `batch` whose append's answer was lost: when the store holds it
   * (the same types and times at its positions; it is written in one transaction, so all of
   * it or none), it is delivered and taken out of `batch`, else it is written again.
   */
  private async settleInDoubt(runId: string, log: RunLog, batch: RunLog['pending']): Promise<void> {
    const { firstSeq, count } = log.inDoubt!;
    const stored = await this.store.listEvents({ runId, after: firstSeq - 1, limit: count });
    log.inDoubt = undefined;
    const same =
      stored.length === count &&
      count <= batch.length &&
      stored.every(
        (event, index) =>
          event.seq === firstSeq + index &&
          event.type === batch[index]!.data.type &&
          event.time === batch[index]!.time,
      );
    if (!same) return;
    for (const [index, event] of stored.entries()) {
      this.deliver(log, event);
      batch[index]!.resolve(event);
    }
    batch.splice(0, count);
    log.nextSeq = firstSeq + count;
    log.undelivered = batch.length;
  }

  private pauseBeforeRetry(log: RunLog): Promise<void> {
    const ms = Math.min(LONGEST_RETRY_PAUSE_MS, FIRST_RETRY_PAUSE_MS * 2 ** (log.failures - 1));
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        log.wake = undefined;
        resolve();
      }
      log.wake = done;
    });
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
