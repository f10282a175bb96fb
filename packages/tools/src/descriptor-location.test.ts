import { mkdir, mkdtemp, open, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descriptorLocation, hasProcDescriptors } from './descriptor-location.js';
import { runRegexWorker } from './run-regex-worker.js';

// The kernel marks the link of a descriptor whose file lost its name with " (deleted)". A
// live file can carry that name too: `/w/root (deleted)` sits outside `/w/root`, and must
// never read back as the root itself.
describe.runIf(hasProcDescriptors())('descriptorLocation and a name ending in " (deleted)"', () => {
  let base: string;
  let root: string;
  let outside: string;
  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'descriptor-location-'));
    root = join(base, 'root');
    outside = join(base, 'root (deleted)');
    await mkdir(root);
    await writeFile(outside, 'OUTSIDE-SECRET\n');
  });
  afterAll(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('keeps the name of a live file that ends in " (deleted)"', async () => {
    const handle = await open(outside, 'r');
    try {
      expect(await descriptorLocation(handle, outside)).toBe(outside);
    } finally {
      await handle.close();
    }
  });

  it('gives an unlinked file the last name it had', async () => {
    const gone = join(root, 'gone.txt');
    await writeFile(gone, 'x');
    const handle = await open(gone, 'r');
    try {
      await unlink(gone);
      expect(await descriptorLocation(handle, gone)).toBe(gone);
    } finally {
      await handle.close();
    }
  });

  it('Grep\'s worker skips an outside file named "<root> (deleted)" instead of reading it as the root', async () => {
    const results = await runRegexWorker({
      task: {
        kind: 'search-files',
        paths: [outside],
        relativePaths: ['x'],
        regex: { source: 'SECRET', flags: '' },
        mode: 'content',
        before: 0,
        after: 0,
        maxFileBytes: 1_000_000,
        confineTo: root,
        allowHardLinks: false,
      },
      timeoutMs: 5_000,
      signal: new AbortController().signal,
      what: 'search',
    });
    expect(JSON.stringify(results)).not.toContain('OUTSIDE-SECRET');
  });
});
