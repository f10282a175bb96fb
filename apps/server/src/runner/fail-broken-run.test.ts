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

describe('a turn whose end the store refuses', () => {
  it('stores the end once the store takes it (not running for good, not failed for a passing error), and its event stream ends', async () => {
    const test = await startTestServer({
      policy: scenarioPolicy(new Gates()),
      store: storeFailingToCompleteOnce,
    });
    try {
      const created = await json<{ id: string }>(
        await test.api('/v1/runs', { json: { prompt: 'scenario:hello' } }),
      );
      const run = await waitForRun(test, created.id, ended);
      expect(run.status).toBe('completed');
      expect(run.error).toBeNull();

      // A follower of the run's events is told, and its stream ends.
      const stream = await readSse(await test.api(`/v1/runs/${created.id}/events`));
      const last = stream.events.at(-1);
      expect(last?.event).toBe('run.status');
      expect(last?.data.data).toMatchObject({ status: 'completed' });
      expect(test.logs.join('')).toContain('could not store the end of a turn; trying again');
      expect(test.logs.join('')).toContain('disk I/O error');
    } finally {
      await test.close();
    }
  });
});
