import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../__fixtures__/services.js';
import { openPostgresRunStore } from './postgres-run-store.js';
import { describeRunStoreContract, sampleAgent, sampleRun } from './run-store-contract.js';
import { probeTestServices } from '../__fixtures__/services.js';

const services = await probeTestServices();

describe.runIf(services.postgres)('with a PostgreSQL server', () => {
  let database: { url: string; drop: () => Promise<void> };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  describeRunStoreContract('PostgreSQL', async () => {
    const open = async () => {
      const store = await openPostgresRunStore({ url: database.url });
      await store.migrate();
      return store;
    };
    const store = await open();
    // One database for the file: each test starts from empty tables.
    await store.db.deleteFrom('runs').execute();
    return { store, reopen: open, cleanup: async () => undefined };
  });

  describe('openPostgresRunStore', () => {
    it('lets several servers migrate the same database at once', async () => {
      const stores = await Promise.all(
        [1, 2, 3].map(() => openPostgresRunStore({ url: database.url })),
      );
      try {
        await Promise.all(stores.map((store) => store.migrate()));
        const names = await stores[0]!.db
          .selectFrom('kysely_migration' as never)
          .select('name' as never)
          .execute();
        expect(names.map((row) => (row as { name: string }).name)).toEqual([
          '0001_initial',
          '0002_transcripts',
        ]);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    });

    it('stores a NUL character of a prompt or a tool output as U+FFFD, which PostgreSQL text can hold', async () => {
      const store = await openPostgresRunStore({ url: database.url });
      try {
        await store.migrate();
        const run = await store.createRun(sampleRun({ prompt: 'print bin\0ary' }));
        await store.upsertAgent(
          sampleAgent(run.id, 'main', {
            lastActivity: 'Bash: printf bin\0ary',
            description: 'a\0b',
          }),
        );
        expect((await store.getRun(run.id))?.prompt).toBe('print bin\ufffdary');
        const [agent] = await store.listAgents(run.id);
        expect(agent).toMatchObject({
          lastActivity: 'Bash: printf bin\ufffdary',
          description: 'a\ufffdb',
        });
      } finally {
        await store.close();
      }
    });

    it('tells another connection about every append once it is committed', async () => {
      const writer = await openPostgresRunStore({ url: database.url });
      const reader = await openPostgresRunStore({ url: database.url });
      try {
        await writer.migrate();
        const heard: string[] = [];
        const stop = await reader.watchAppends(({ runId, firstSeq: first, lastSeq: last }) =>
          heard.push(`${runId}:${first}-${last}`),
        );
        const run = await writer.createRun(sampleRun());
        const event = (seq: number) => ({
          runId: run.id,
          seq,
          type: 'agent.progress',
          agentId: 'main',
          time: new Date().toISOString(),
          data: { type: 'agent.progress' },
        });
        await writer.appendEvents([event(1), event(2)]);
        await writer.appendEvents([event(3)]);
        for (let attempt = 0; attempt < 200 && heard.length < 2; attempt++)
          await new Promise((resolve) => setTimeout(resolve, 10));
        await stop();
        expect(heard).toEqual([`${run.id}:1-2`, `${run.id}:3-3`]);
      } finally {
        await writer.close();
        await reader.close();
      }
    });

    it('names the server without its password when it cannot connect', async () => {
      const url = 'postgres://delegate:s3cret-password@127.0.0.1:1/nowhere';
      const failure = openPostgresRunStore({ url });
      await expect(failure).rejects.toThrow(
        /Cannot reach the PostgreSQL store at postgres:\/\/delegate:\*\*\*@127\.0\.0\.1:1\/nowhere/,
      );
      await expect(failure).rejects.not.toThrow(/s3cret/);
    });
  });
});
