import { DelegateError } from '@delegate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { InProcessRunQueue } from '../queue/in-process-run-queue.js';
import type { RunJob } from '../queue/run-queue.js';
import type { KyselyRunStore } from '../store/kysely-run-store.js';
import { openSqliteRunStore } from '../store/sqlite-run-store.js';
import { type ApiRunList, json } from '../__fixtures__/api-types.js';
import { type TestServer, startTestServer } from '../__fixtures__/test-server.js';

/** An in-process queue that refuses jobs, as a BullMQ queue does while Redis does not answer. */
class RefusingQueue extends InProcessRunQueue {
  refuse = true;
  override async enqueue(job: RunJob): Promise<void> {
    if (this.refuse)
      throw new DelegateError('LIMIT_EXCEEDED', 'The run queue did not answer within 5 s.');
    return super.enqueue(job);
  }
}

let test: TestServer | undefined;
afterEach(async () => {
  await test?.close();
  test = undefined;
});

describe('a new run the queue refuses', () => {
  it('is withdrawn as failed, and the 503 says to send the request again', async () => {
    const queue = new RefusingQueue({ concurrency: 1 });
    test = await startTestServer({ policy: () => 'done', queue });
    const refused = await test.api('/v1/runs', { json: { prompt: 'hello' } });
    expect(refused.status).toBe(503);
    expect((await json<{ error: { message: string } }>(refused)).error.message).toBe(
      'The run queue did not answer within 5 s. The run was not started and will not be: send the request again once the server is ready (GET /readyz).',
    );
    const { runs } = await json<ApiRunList>(await test.api('/v1/runs'));
    expect(runs).toMatchObject([
      { status: 'failed', error: { code: 'UNAVAILABLE', message: /^Not started: / } },
    ]);
  });

  it('says its fate is unknown when the store cannot withdraw it either, naming the run to look at', async () => {
    const queue = new RefusingQueue({ concurrency: 1 });
    let storeDown = false;
    test = await startTestServer({
      policy: () => 'done',
      queue,
      store: (dataDir) => {
        const store = openSqliteRunStore({ path: `${dataDir}/runs.sqlite` });
        const transitionRun = store.transitionRun.bind(store);
        (store as KyselyRunStore).transitionRun = async (options) => {
          if (storeDown) throw new Error('the store does not answer');
          return transitionRun(options);
        };
        // The run is stored, then the store goes away with the queue.
        const createRun = store.createRun.bind(store);
        (store as KyselyRunStore).createRun = async (record) => {
          const created = await createRun(record);
          storeDown = true;
          return created;
        };
        return store;
      },
    });
    const refused = await test.api('/v1/runs', { json: { prompt: 'hello' } });
    expect(refused.status).toBe(503);
    const { message } = (await json<{ error: { message: string } }>(refused)).error;
    expect(message).toMatch(
      /^The run queue did not answer within 5 s\. Run (run_\w+) could not be withdrawn either \(the store does not answer\), so it may still start once the queue and the store answer: look at GET \/v1\/runs\/\1 before sending the request again\.$/,
    );
    storeDown = false;
  });
});
