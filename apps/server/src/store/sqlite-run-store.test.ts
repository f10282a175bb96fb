import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { describeRunStoreContract, sampleRun } from './run-store-contract.js';
import { openSqliteRunStore } from './sqlite-run-store.js';

describeRunStoreContract('SQLite', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'delegate-store-'));
  const path = join(directory, 'nested', 'runs.sqlite');
  const open = async () => {
    const store = openSqliteRunStore({ path });
    await store.migrate();
    return store;
  };
  return {
    store: await open(),
    reopen: open,
    cleanup: () => rm(directory, { recursive: true, force: true }),
  };
});

describe('openSqliteRunStore', () => {
  it('uses WAL mode and records the applied migrations', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'delegate-store-'));
    try {
      const path = join(directory, 'runs.sqlite');
      const store = openSqliteRunStore({ path });
      await store.migrate();
      await store.createRun(sampleRun());
      await store.close();
      expect((await stat(path)).size).toBeGreaterThan(0);
      const raw = new BetterSqlite3(path, { readonly: true });
      try {
        expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
        const names = raw.prepare('select name from kysely_migration order by name').all();
        expect(names).toEqual([{ name: '0001_initial' }, { name: '0002_transcripts' }]);
      } finally {
        raw.close();
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('fails with the file named when the database file is not a database', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'delegate-store-'));
    try {
      const path = join(directory, 'runs.sqlite');
      await writeFile(path, 'not sqlite at all'.repeat(100));
      expect(() => openSqliteRunStore({ path })).toThrow(
        new RegExp(`Cannot open the run store ${path}.*not a database`),
      );
      expect(await readFile(path, 'utf8')).toContain('not sqlite');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
