import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ApiRun, json } from '../__fixtures__/api-types.js';
import { Gates, scenarioPolicy } from '../__fixtures__/scenario-policy.js';
import { readSse, startTestServer, waitForRun } from '../__fixtures__/test-server.js';
import type { RunStore } from '../store/run-store.js';
import { openSqliteRunStore } from '../store/sqlite-run-store.js';

const ENDED = ['completed', 'failed', 'cancelled', 'interrupted'];
const ended = (run: ApiRun) => ENDED.includes(run.status);

/** The server's SQLite store, except that the first write ending a turn `completed` fails. */
function storeFailingToCompleteOnce(dataDir: string): RunStore {
  const store = openSqliteRunStore({ path: join(dataDir, 'runs.sqlite') });
  let failed = false;
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'transitionRun')
        return async (options: Parameters<RunStore['transitionRun']>[0]) => {
          if (!failed && options.patch.status === 'completed') {
            failed = true;
            throw new Error('SQLITE_IOERR: disk I/O error (injected by the test)');
          }
          return target.transitionRun(options);
        };
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('a turn that breaks off with an error it cannot record', () => {
  it('fails the run with the reason (not running for good), ends its event stream, and resume continues it', async () => {
    const test = await startTestServer({
      policy: scenarioPolicy(new Gates()),
      store: storeFailingToCompleteOnce,
    });
    try {
      const created = await json<{ id: string }>(
        await test.api('/v1/runs', { json: { prompt: 'scenario:hello' } }),
      );
      const run = await waitForRun(test, created.id, ended);
      expect(run.status).toBe('failed');
      expect(run.error?.code).toBe('INTERNAL');
      expect(run.error?.message).toContain('disk I/O error');
      expect(run.error?.message).toContain(`POST /v1/runs/${created.id}/resume`);

      // A follower of the run's events is told, and its stream ends.
      const stream = await readSse(await test.api(`/v1/runs/${created.id}/events`));
      const last = stream.events.at(-1);
      expect(last?.event).toBe('run.status');
      expect(last?.data.data).toMatchObject({ status: 'failed', error: { code: 'INTERNAL' } });
      expect(test.logs.join('')).toContain('run job failed');

      const resumed = await test.api(`/v1/runs/${created.id}/resume`, { json: {} });
      expect(resumed.status).toBe(202);
      const again = await waitForRun(test, created.id, (current) => current.status === 'completed');
      expect(again.error).toBeNull();
    } finally {
      await test.close();
    }
  });
});
