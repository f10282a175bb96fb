import { renameSync, symlinkSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { appendMemoryEntry } from './append-memory-entry.js';
import type * as CheckMemoryDirectory from './check-memory-directory.js';
import { clearMemory } from './clear-memory.js';
import { listMemory } from './list-memory.js';
import { prepareAgentMemory } from './prepare-agent-memory.js';
import { readMemory } from './read-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

// The worst-timed swap, every time: right after the link checks pass, a folder on the way
// is swapped for a symbolic link to a look-alike tree outside the project. What follows
// must neither read, write nor delete anything there.
const hook = vi.hoisted(() => ({
  afterCheck: undefined as (() => void) | undefined,
  /** Checks to let pass before the swap (writes check again once the folder exists). */
  skip: 0,
}));

vi.mock('./check-memory-directory.js', async (importOriginal) => {
  const actual = await importOriginal<typeof CheckMemoryDirectory>();
  return {
    ...actual,
    checkMemoryDirectory: (check: Parameters<typeof actual.checkMemoryDirectory>[0]) => {
      actual.checkMemoryDirectory(check);
      if (hook.skip-- > 0) return;
      const swap = hook.afterCheck;
      hook.afterCheck = undefined;
      swap?.();
    },
  };
});

const makeTempDir = useTempDirs();
const SECRET = 'OUTSIDE-SECRET-MEMORY';

beforeEach(() => {
  hook.afterCheck = undefined;
  hook.skip = 0;
});

type Swapped = '.claude' | 'root' | 'agent folder';

async function setup(swapped: Swapped) {
  const base = await makeTempDir();
  const cwd = join(base, 'project');
  const outside = join(base, 'outside');
  const outsideAgent = join(outside, 'agent-memory', 'reviewer');
  await mkdir(outsideAgent, { recursive: true });
  await writeFile(join(outsideAgent, 'MEMORY.md'), `${SECRET}\n`);
  await writeFile(join(outsideAgent, 'outside-only.md'), 'precious');
  await writeMemoryIndex('reviewer', 'project', 'inside memory\n', { cwd });
  const claude = join(cwd, '.claude');
  const swaps: Record<Swapped, readonly [path: string, target: string]> = {
    '.claude': [claude, outside],
    root: [join(claude, 'agent-memory'), join(outside, 'agent-memory')],
    'agent folder': [join(claude, 'agent-memory', 'reviewer'), outsideAgent],
  };
  const [path, target] = swaps[swapped];
  // Armed for the next check only: the folder moves aside and a link takes its place.
  const armSwap = (skip = 0): void => {
    hook.skip = skip;
    hook.afterCheck = () => {
      renameSync(path, `${path}.parked`);
      symlinkSync(target, path);
    };
  };
  const outsideFiles = async (): Promise<Record<string, string>> => ({
    'MEMORY.md': await readFile(join(outsideAgent, 'MEMORY.md'), 'utf8'),
    'outside-only.md': await readFile(join(outsideAgent, 'outside-only.md'), 'utf8'),
    listing: (await readdir(outsideAgent)).sort().join(','),
  });
  return { cwd, armSwap, outsideFiles, before: await outsideFiles() };
}

const SWAPPED: Swapped[] = ['.claude', 'root', 'agent folder'];

describe('a folder swapped for a symbolic link right after the checks', () => {
  it.each(SWAPPED)('keeps outside memory out of the prompt (%s swapped)', async (swapped) => {
    const { cwd, armSwap } = await setup(swapped);
    const errors: DelegateError[] = [];
    armSwap();
    const { prompt, ready } = prepareAgentMemory('reviewer', 'project', {
      cwd,
      onError: (error) => errors.push(error),
    });
    await ready.catch(() => undefined);
    expect(prompt).not.toContain(SECRET);
    expect(prompt).not.toContain('/proc/self/fd');
    expect(errors.map((error) => error.code)).toContain('PATH_ESCAPE');
  });

  it.each(SWAPPED)('never reads outside in readMemory (%s swapped)', async (swapped) => {
    const { cwd, armSwap } = await setup(swapped);
    armSwap();
    await expect(readMemory('reviewer', 'project', { cwd })).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
  });

  it.each(SWAPPED)('never lists outside in listMemory (%s swapped)', async (swapped) => {
    const { cwd, armSwap } = await setup(swapped);
    armSwap();
    const entries = await listMemory({ cwd, scopes: ['project'] }).catch((error: unknown) => {
      expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
      return [];
    });
    // A linked agent folder is skipped like any link; a linked root refuses the listing.
    expect(entries.map((entry) => entry.folderName)).not.toContain('reviewer');
    expect(entries.flatMap((entry) => entry.files.map((file) => file.path))).not.toContain(
      'outside-only.md',
    );
  });

  it.each(SWAPPED)('never deletes outside in clearMemory (%s swapped)', async (swapped) => {
    const { cwd, armSwap, outsideFiles, before } = await setup(swapped);
    armSwap();
    const cleared = await clearMemory('reviewer', 'project', { cwd }).catch((error: unknown) => {
      expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
      return 'refused';
    });
    // A link in the agent folder's place is removed as a link; a linked root is refused.
    expect(cleared).toBe(swapped === 'agent folder' ? true : 'refused');
    expect(await outsideFiles()).toEqual(before);
  });

  it.each(
    SWAPPED.flatMap((swapped) => [[swapped, 'write'] as const, [swapped, 'append'] as const]),
  )('never writes or copies outside memory (%s swapped, %s)', async (swapped, change) => {
    const { cwd, armSwap, outsideFiles, before } = await setup(swapped);
    // The second check runs once the folder exists, just before MEMORY.md is changed.
    armSwap(1);
    const changed =
      change === 'write'
        ? writeMemoryIndex('reviewer', 'project', 'replaced\n', { cwd })
        : appendMemoryEntry('reviewer', 'project', '- new', { cwd });
    await expect(changed).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    expect(await outsideFiles()).toEqual(before);
  });
});
