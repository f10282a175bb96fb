import { ACTIVE_RUN_STATUSES, type RunStatus } from '../http/schemas.js';
import type { RunStore, StoredEvent } from '../store/run-store.js';
import type { RunEventHub } from './run-event-hub.js';

const PAGE = 500;

function statusOf(event: StoredEvent): RunStatus | undefined {
  return event.type === 'run.status' ? (event.data.status as RunStatus) : undefined;
}

/** The run's status as of its log position `seq` (from the log itself, the stream's truth). */
async function statusAt(options: {
  store: RunStore;
  runId: string;
  seq?: number;
}): Promise<RunStatus | undefined> {
  return (await statusEventAt(options))?.status;
}

// The last `run.status` event at or before `seq`: its status and its position.
async function statusEventAt(options: {
  store: RunStore;
  runId: string;
  seq?: number;
}): Promise<{ status: RunStatus | undefined; seq: number } | undefined> {
  const event = await options.store.lastEventOfType({
    runId: options.runId,
    type: 'run.status',
    ...(options.seq === undefined ? {} : { atOrBefore: options.seq }),
  });
  return event ? { status: statusOf(event), seq: event.seq } : undefined;
}

/**
 * True when following the run from `after` would send nothing: its log says it is no
 * longer active, nothing is waiting to be written, and nothing lies after `after`.
 */
export async function hasNothingToFollow(options: {
  store: RunStore;
  hub: RunEventHub;
  runId: string;
  after: number;
}): Promise<boolean> {
  if (options.hub.hasPending(options.runId)) return false;
  const status = await statusAt(options);
  if (status === undefined || ACTIVE_RUN_STATUSES.includes(status)) return false;
  return (await options.store.lastEventSeq(options.runId)) <= options.after;
}

/**
 * A run's events after `after`: first replayed from the store, then live from the hub,
 * without a gap or a duplicate. Ends after the event that leaves the run inactive
 * (`completed`, `failed`, `cancelled`, `interrupted`), or when `signal` aborts.
 */
export async function* followRunEvents(options: {
  store: RunStore;
  hub: RunEventHub;
  runId: string;
  after: number;
  signal: AbortSignal;
}): AsyncGenerator<StoredEvent> {
  const { store, hub, runId, signal } = options;
  const buffer: StoredEvent[] = [];
  let wake: (() => void) | undefined;
  const wakeUp = (): void => {
    wake?.();
    wake = undefined;
  };
  // Subscribe before reading the store: whatever is stored after this point arrives live.
  const unsubscribe = hub.subscribe(runId, (event) => {
    buffer.push(event);
    wakeUp();
  });
  signal.addEventListener('abort', wakeUp);
  try {
    let last = options.after;
    const known = await statusEventAt({ store, runId, seq: last });
    let status = known?.status;
    // The position `status` is known at: a later event's status replaces it, an earlier one's
    // (a live copy of an event already read from the store) never does.
    let statusSeq = known?.seq ?? 0;
    const learn = (event: StoredEvent): void => {
      if (event.seq <= statusSeq) return;
      status = statusOf(event) ?? status;
      statusSeq = event.seq;
    };
    for (;;) {
      const page = await store.listEvents({ runId, after: last, limit: PAGE });
      for (const event of page) {
        if (signal.aborted) return;
        yield event;
        last = event.seq;
        learn(event);
      }
      if (page.length < PAGE) break;
    }
    const finished = (): boolean =>
      status !== undefined && !ACTIVE_RUN_STATUSES.includes(status) && !hub.hasPending(runId);
    for (;;) {
      while (buffer.length > 0) {
        const event = buffer.shift()!;
        // Not sent again, but it still tells how the run goes on: a stream opened past the
        // last event ends when the run ends, as any other does.
        learn(event);
        if (event.seq <= last) continue;
        if (signal.aborted) return;
        yield event;
        last = event.seq;
      }
      if (finished() || signal.aborted) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (buffer.length > 0 || signal.aborted) resolve();
      });
    }
  } finally {
    signal.removeEventListener('abort', wakeUp);
    unsubscribe();
  }
}
