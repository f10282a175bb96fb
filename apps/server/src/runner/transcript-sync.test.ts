import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleRun } from '../store/run-store-contract.js';
import type { KyselyRunStore } from '../store/kysely-run-store.js';
import { openSqliteRunStore } from '../store/sqlite-run-store.js';
import { TranscriptSync } from './transcript-sync.js';

describe('TranscriptSync', () => {
  let directory: string;
  let store: KyselyRunStore;
  let runId: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'delegate-transcript-sync-'));
    store = openSqliteRunStore({ path: join(directory, 'runs.sqlite') });
    await store.migrate();
    runId = (await store.createRun(sampleRun())).id;
  });
  afterEach(async () => {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  });

  const sync = (folder: string) =>
    new TranscriptSync({ store, runId, directory: join(directory, folder), sessionId: runId });

  it('stores whole lines as they are written and restores them on another worker', async () => {
    const worker = join(directory, 'worker-a');
    await mkdir(join(worker, runId, 'agents'), { recursive: true });
    const main = join(worker, `${runId}.jsonl`);
    const agent = join(worker, runId, 'agents', 'a1.jsonl');
    const meta = join(worker, runId, 'agents', 'a1.meta.json');
    const first = sync('worker-a');
    await writeFile(main, '{"turn":1}\n{"turn":2,"text":"ünï');
    await writeFile(agent, '{"agent":1}\n');
    await writeFile(meta, '{"agentType":"general-purpose"}\n');
    await first.sync();
    // The line still being written is not part of the checkpoint.
    await appendFile(main, 'code"}\n');
    await writeFile(meta, '{"agentType":"Explore"}\n');
    await first.sync();
    await first.sync();

    const other = sync('worker-b');
    await other.restore();
    const restored = join(directory, 'worker-b');
    expect(await readFile(join(restored, `${runId}.jsonl`), 'utf8')).toBe(
      '{"turn":1}\n{"turn":2,"text":"ünïcode"}\n',
    );
    expect(await readFile(join(restored, runId, 'agents', 'a1.jsonl'), 'utf8')).toBe(
      '{"agent":1}\n',
    );
    expect(await readFile(join(restored, runId, 'agents', 'a1.meta.json'), 'utf8')).toBe(
      '{"agentType":"Explore"}\n',
    );
    // Writing on from the restored files continues the same stored files.
    await appendFile(join(restored, `${runId}.jsonl`), '{"turn":3}\n');
    await other.sync();
    const third = sync('worker-c');
    await third.restore();
    expect(await readFile(join(directory, 'worker-c', `${runId}.jsonl`), 'utf8')).toBe(
      '{"turn":1}\n{"turn":2,"text":"ünïcode"}\n{"turn":3}\n',
    );
  });

  it('makes a stale local copy match the store (the store holds the last finished turn)', async () => {
    const worker = join(directory, 'worker-a');
    await mkdir(worker, { recursive: true });
    const main = join(worker, `${runId}.jsonl`);
    await writeFile(main, '{"turn":1}\n');
    const writer = sync('worker-a');
    await writer.sync();
    await store.saveTranscriptChunks([
      { runId, file: `${runId}.jsonl`, offset: 11, content: '{"turn":2}\n' },
    ]);
    await writer.restore();
    expect(await readFile(main, 'utf8')).toBe('{"turn":1}\n{"turn":2}\n');
  });
});
