import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DelegateError } from '@delegate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRegexWorker } from './run-regex-worker.js';

const never = new AbortController().signal;
const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));

function filter(source: string, paths: string[], timeoutMs = 5_000) {
  return runRegexWorker({
    task: { kind: 'filter-paths', regex: { source, flags: '' }, paths },
    timeoutMs,
    signal: never,
    what: `filter ${source}`,
  });
}

describe('runRegexWorker (a pool of reused worker threads)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'regex-worker-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('answers many concurrent and sequential tasks correctly', async () => {
    const paths = Array.from({ length: 50 }, (_, index) => `src/file-${index}.ts`);
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, (_, index) => filter(`-${index}\\.ts$`, paths)),
    );
    expect(concurrent).toEqual(Array.from({ length: 20 }, (_, index) => [index]));
    for (let round = 0; round < 20; round++) {
      expect(await filter(`file-${round}\\.`, paths)).toEqual([round]);
    }
  });

  it('stops a runaway regex at its limit and the next task still gets an answer', async () => {
    const error = await filter('^(a+)+$', [`${'a'.repeat(40)}!`], 200).catch(
      (caught: unknown) => caught,
    );
    expect(DelegateError.hasCode(error, 'LIMIT_EXCEEDED')).toBe(true);
    expect(await filter('b', ['a', 'b'])).toEqual([1]);
  });

  it('queues tasks past one per core; the time limit of a queued task starts when a worker takes it', async () => {
    const slots = Math.max(2, availableParallelism());
    const runaway = `${'a'.repeat(40)}!`;
    const stuck = Array.from({ length: slots }, () =>
      filter('^(a+)+$', [runaway], 400).catch((caught: unknown) => caught),
    );
    // Waits ~400 ms for a worker, then needs only a moment: a 250 ms limit is enough.
    const queued = filter('y', ['x', 'y'], 250);
    const aborted = new AbortController();
    const cancelled = runRegexWorker({
      task: { kind: 'filter-paths', regex: { source: 'x', flags: '' }, paths: ['x'] },
      timeoutMs: 5_000,
      signal: aborted.signal,
      what: 'cancelled while waiting',
    }).catch((caught: unknown) => caught);
    aborted.abort();
    expect(DelegateError.hasCode(await cancelled, 'ABORTED')).toBe(true);
    expect(await queued).toEqual([1]);
    for (const error of await Promise.all(stuck)) {
      expect(DelegateError.hasCode(error, 'LIMIT_EXCEEDED')).toBe(true);
    }
  });

  it('reports a failure inside the worker as TOOL_FAILED and keeps working', async () => {
    const error = await runRegexWorker({
      task: { kind: 'filter-paths', regex: { source: 'a', flags: 'xyz' }, paths: ['a'] },
      timeoutMs: 5_000,
      signal: never,
      what: 'bad flags',
    }).catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'TOOL_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/bad flags failed: .*flags/i);
    expect(await filter('a', ['a'])).toEqual([0]);
  });

  it('lets a process exit on its own while workers are idle in the pool', async () => {
    const script = join(root, 'exit.mts');
    const module = fileURLToPath(new URL('./run-regex-worker.ts', import.meta.url));
    await writeFile(
      script,
      `import { runRegexWorker } from ${JSON.stringify(module)};
const result = await runRegexWorker({ task: { kind: 'filter-paths', regex: { source: 'x', flags: '' }, paths: ['x', 'y'] }, timeoutMs: 5000, signal: new AbortController().signal, what: 'probe' });
console.log(JSON.stringify(result));
`,
    );
    const started = Date.now();
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], {
      encoding: 'utf8',
      timeout: 8_000,
      env: { ...process.env, TSX_TSCONFIG_PATH: join(repositoryRoot, 'tsconfig.source.json') },
      cwd: repositoryRoot,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('[0]');
    expect(child.status).toBe(0);
    // The idle worker's ten-second timer must not hold the process.
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});
