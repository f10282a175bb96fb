import { DelegateError, errorMessage } from '@delegate/core';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';
import { KyselyRunStore } from './kysely-run-store.js';
import { redactUrl } from './redact-url.js';
import { TextValues, postgresText } from './text-values-plugin.js';
import type { AppendWatchEvents, EventsAppended } from './run-store.js';

/** PostgreSQL channel that carries `<runId> <first seq> <last seq>` for every append to an event log. */
export const EVENTS_CHANNEL = 'delegate_events';

/** First pause before listening again after the connection dropped, in ms (doubled per failure). */
const WATCH_RETRY_FIRST_MS = 500;
/** Longest pause between attempts to listen again, in ms. */
const WATCH_RETRY_MAX_MS = 10_000;

/**
 * The shared store on PostgreSQL: the same Kysely queries and migrations as the SQLite
 * store, over a `pg` pool; every append to an event log sends a NOTIFY in its own
 * transaction, so any server following the run hears of it once it is committed.
 */
export class PostgresRunStore extends KyselyRunStore {
  private readonly url: string;

  constructor(options: { url: string; poolSize?: number }) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      // A server must not hang on a database that does not answer.
      connectionTimeoutMillis: 10_000,
    });
    // An idle client losing its connection must not crash the process; the next query reports it.
    pool.on('error', () => undefined);
    // Nor one that loses it while checked out between two queries (Kysely holds a client for a
    // transaction): the pool listens only to idle ones, and the query in progress reports it.
    pool.on('connect', (client) => client.on('error', () => undefined));
    super({
      db: new Kysely<Database>({
        dialect: new PostgresDialect({ pool }),
        // PostgreSQL refuses a NUL in text ("invalid byte sequence for encoding UTF8: 0x00"), and
        // a tool's output can hold one (a command printing binary data): stored as U+FFFD.
        plugins: [new TextValues(postgresText)],
      }),
      afterAppend: async (transaction, events) => {
        const ranges = new Map<string, [number, number]>();
        for (const event of events) {
          const range = ranges.get(event.runId);
          if (range) range[1] = event.seq;
          else ranges.set(event.runId, [event.seq, event.seq]);
        }
        for (const [runId, [first, last]] of ranges)
          await sql`select pg_notify(${EVENTS_CHANNEL}, ${`${runId} ${first} ${last}`})`.execute(
            transaction,
          );
      },
    });
    this.url = options.url;
  }

  /**
   * Listens on a dedicated connection. When it drops, connects again after 0.5 s, then after
   * twice as long each time it fails (at most 10 s), until it listens again or is stopped.
   */
  async watchAppends(
    listener: (append: EventsAppended) => void,
    events: AppendWatchEvents = {},
  ): Promise<() => Promise<void>> {
    let client: pg.Client | undefined;
    let stopped = false;
    let retry: NodeJS.Timeout | undefined;
    let failures = 0;
    const lose = (lost: pg.Client, error: unknown): void => {
      if (client !== lost) return;
      client = undefined;
      void lost.end().catch(() => undefined);
      if (stopped) return;
      events.onLost?.(error);
      reconnect();
    };
    const open = async (): Promise<pg.Client> => {
      const next = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 10_000 });
      next.on('notification', (message) => {
        const [runId, first, last] = (message.payload ?? '').split(' ');
        if (runId && first && last)
          listener({ runId, firstSeq: Number(first), lastSeq: Number(last) });
      });
      next.on('error', (error) => lose(next, error));
      next.on('end', () => lose(next, new Error('the connection to PostgreSQL closed')));
      try {
        await next.connect();
        await next.query(`LISTEN ${EVENTS_CHANNEL}`);
      } catch (error) {
        void next.end().catch(() => undefined);
        throw error;
      }
      return next;
    };
    const reconnect = (): void => {
      const pause = Math.min(WATCH_RETRY_MAX_MS, WATCH_RETRY_FIRST_MS * 2 ** failures);
      failures += 1;
      retry = setTimeout(() => {
        open().then(
          (next) => {
            if (stopped) return void next.end().catch(() => undefined);
            client = next;
            failures = 0;
            events.onRestored?.();
          },
          () => {
            if (!stopped) reconnect();
          },
        );
      }, pause);
      retry.unref();
    };
    client = await open();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      const last = client;
      client = undefined;
      await last?.end().catch(() => undefined);
    };
  }
}

/**
 * Opens the PostgreSQL store at `url` (`postgres://user:password@host:port/database`).
 * Call `migrate()` before use; several servers may migrate at once (Kysely takes a lock).
 */
export async function openPostgresRunStore(options: {
  url: string;
  poolSize?: number;
}): Promise<PostgresRunStore> {
  const store = new PostgresRunStore(options);
  try {
    await store.ping();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Cannot reach the PostgreSQL store at ${redactUrl(options.url)}: ${errorMessage(error)}. Check that the server runs, the database exists and the user may connect (--store / DELEGATE_STORE_URL).`,
      { cause: error },
    );
  }
  return store;
}
