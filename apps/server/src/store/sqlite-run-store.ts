import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DelegateError, errorMessage } from '@delegate/core';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './database.js';
import { KyselyRunStore } from './kysely-run-store.js';
import { TextValues, wellFormed } from './text-values-plugin.js';

/**
 * Opens the embedded store: a SQLite file (created with its directory when missing) in
 * WAL mode, so readers (SSE replays) never wait for the writer. Call `migrate()` before
 * use.
 */
export function openSqliteRunStore(options: { path: string }): KyselyRunStore {
  mkdirSync(dirname(options.path), { recursive: true });
  let database: BetterSqlite3.Database;
  try {
    database = new BetterSqlite3(options.path);
    database.pragma('journal_mode = WAL');
    // NORMAL in WAL mode loses at most the last transactions on power loss, never consistency.
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = ON');
    database.pragma('busy_timeout = 5000');
  } catch (error) {
    throw new DelegateError(
      'FILE_SYSTEM_ERROR',
      `Cannot open the run store ${options.path}: ${errorMessage(error)}. Check that the file is a SQLite database this user can write, or point --data-dir elsewhere.`,
      { cause: error },
    );
  }
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database }),
    plugins: [new TextValues(wellFormed)],
  });
  return new KyselyRunStore({ db });
}
