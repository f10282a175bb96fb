import { lstat, mkdir, readFile, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSwapper } from './__fixtures__/swapper.js';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { appendMemoryEntry } from './append-memory-entry.js';
import { clearMemory } from './clear-memory.js';
import { listMemory } from './list-memory.js';
import { loadAgentMemoryPrompt } from './load-agent-memory-prompt.js';
import { readMemory } from './read-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

// A second process swaps one folder on the way to an agent's memory (the project's
// `.claude`, the scope root or the agent folder) for a symbolic link to a look-alike tree
// outside the project, and back, while memory is read and cleared. Whatever the timing,
// nothing outside may be read or deleted. The swapper runs for a bounded number of calls,
// so the test is fast; its outcome does not depend on when the swaps land.
const swapper = useSwapper();
const makeTempDir = useTempDirs();
const ROUNDS = 300;
const SECRET = 'OUTSIDE-SECRET-MEMORY';

type Swapped = '.claude' | 'root' | 'agent folder' | 'subfolder';
const SWAPPED: Swapped[] = ['.claude', 'root', 'agent folder', 'subfolder'];
// Names that exist only in the look-alike tree outside: listing one is a leak.
const OUTSIDE_ONLY = ['outside-only.md', 'notes/deep.md'];

interface Race {
  cwd: string;
  outside: string;
  /** The folder the second process swaps. */
  path: string;
  /** Where its symbolic link points: the look-alike folder outside. */
  target: string;
}

/** A project with reviewer memory and, outside it, a tree shaped like `.claude`. */
async function setup(swapped: Swapped): Promise<Race> {
  const base = await makeTempDir();
  const cwd = join(base, 'project');
  const outside = join(base, 'outside');
  const outsideAgent = join(outside, 'agent-memory', 'reviewer');
  await mkdir(join(outsideAgent, 'notes'), { recursive: true });
  await writeFile(join(outsideAgent, 'MEMORY.md'), `${SECRET}\n`);
  await writeFile(join(outsideAgent, 'outside-only.md'), 'precious');
  await writeFile(join(outsideAgent, 'notes', 'deep.md'), 'precious too');
  await writeMemoryIndex('reviewer', 'project', 'inside memory\n', { cwd });
  const claude = join(cwd, '.claude');
  const insideAgent = join(claude, 'agent-memory', 'reviewer');
  await mkdir(join(insideAgent, 'notes'));
  await writeFile(join(insideAgent, 'notes', 'inside.md'), 'inside note');
  switch (swapped) {
    case '.claude':
      return { cwd, outside, path: claude, target: outside };
    case 'root':
      return {
        cwd,
        outside,
        path: join(claude, 'agent-memory'),
        target: join(outside, 'agent-memory'),
      };
    case 'agent folder':
      return { cwd, outside, path: insideAgent, target: outsideAgent };
    case 'subfolder':
      return {
        cwd,
        outside,
        path: join(insideAgent, 'notes'),
        target: join(outsideAgent, 'notes'),
      };
  }
}

/** Every path under `folder` with its content (folders as `/`). */
async function snapshot(folder: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const path of (await readdir(folder, { recursive: true })).sort()) {
    const full = join(folder, path);
    result[path] = (await lstat(full)).isDirectory() ? '/' : await readFile(full, 'utf8');
  }
  return result;
}

/** Stops the swapper and puts the swapped folder back as a real folder. */
async function settle(race: Race): Promise<void> {
  await swapper.stop();
  const found = await lstat(race.path).catch(() => undefined);
  if (found?.isSymbolicLink() === true) await unlink(race.path);
  if (found?.isSymbolicLink() !== false) {
    await rename(`${race.path}.parked`, race.path).catch(() => undefined);
  }
}

/**
 * Puts a fresh `notes` subfolder into the agent folder, made beside it and renamed into
 * place (writing through `notes` by path could land outside while it is a link).
 */
async function addInsideNotes(race: Race, round: number): Promise<void> {
  const staging = join(race.cwd, `staging-${round}`);
  await mkdir(staging);
  await writeFile(join(staging, 'inside.md'), 'inside note');
  await rename(staging, race.path);
}

function startSwapper(race: Race): void {
  swapper.start(race.path, race.target);
}

describe('memory reads while a folder on the way is swapped for a symbolic link', () => {
  it.each(SWAPPED)(
    'never show outside memory when the %s is swapped',
    { timeout: 120_000 },
    async (swapped) => {
      const race = await setup(swapped);
      const before = await snapshot(race.outside);
      const leaks: string[] = [];
      // Reads that worked: the test means nothing if every call was refused.
      let read = 0;
      startSwapper(race);
      for (let round = 0; round < ROUNDS; round++) {
        const prompt = loadAgentMemoryPrompt('reviewer', 'project', {
          cwd: race.cwd,
          onError: () => undefined,
        });
        if (prompt.includes(SECRET)) leaks.push(`prompt, round ${round}`);
        const memory = await readMemory('reviewer', 'project', { cwd: race.cwd }).catch(
          () => undefined,
        );
        if (memory !== undefined) read++;
        if (memory?.index?.includes(SECRET) === true)
          leaks.push(`readMemory index, round ${round}`);
        if (memory?.files.some((file) => OUTSIDE_ONLY.includes(file.path)) === true) {
          leaks.push(`readMemory files, round ${round}`);
        }
        const listed = await listMemory({ cwd: race.cwd, scopes: ['project'] }).catch(() => []);
        for (const entry of listed) {
          if (entry.files.some((file) => OUTSIDE_ONLY.includes(file.path))) {
            leaks.push(`listMemory, round ${round}`);
          }
        }
      }
      await settle(race);
      expect(leaks).toEqual([]);
      expect(read).toBeGreaterThan(0);
      expect(await snapshot(race.outside)).toEqual(before);
    },
  );
});

describe('memory writes while a folder on the way is swapped for a symbolic link', () => {
  it.each(SWAPPED)(
    'never change anything outside when the %s is swapped',
    { timeout: 120_000 },
    async (swapped) => {
      const race = await setup(swapped);
      const before = await snapshot(race.outside);
      let written = 0;
      startSwapper(race);
      for (let round = 0; round < ROUNDS; round++) {
        const write =
          round % 2 === 0
            ? writeMemoryIndex('reviewer', 'project', `round ${round}\n`, { cwd: race.cwd })
            : appendMemoryEntry('reviewer', 'project', `entry ${round}`, { cwd: race.cwd });
        if (await write.then(() => true).catch(() => false)) written++;
      }
      await settle(race);
      expect(written).toBeGreaterThan(0);
      expect(await snapshot(race.outside)).toEqual(before);
      const index = (await readMemory('reviewer', 'project', { cwd: race.cwd })).index ?? '';
      expect(index).not.toContain(SECRET);
    },
  );
});

describe('clearMemory while a folder on the way is swapped for a symbolic link', () => {
  it.each(SWAPPED)(
    'never deletes anything outside when the %s is swapped',
    { timeout: 120_000 },
    async (swapped) => {
      const race = await setup(swapped);
      const before = await snapshot(race.outside);
      let cleared = 0;
      startSwapper(race);
      for (let round = 0; round < ROUNDS; round++) {
        await writeMemoryIndex('reviewer', 'project', `round ${round}\n`, {
          cwd: race.cwd,
        }).catch(() => undefined);
        if (swapped === 'subfolder') await addInsideNotes(race, round).catch(() => undefined);
        if (await clearMemory('reviewer', 'project', { cwd: race.cwd }).catch(() => false))
          cleared++;
      }
      await settle(race);
      expect(cleared).toBeGreaterThan(0);
      expect(await snapshot(race.outside)).toEqual(before);
      // Once the swapping stops, clearing works as usual.
      await writeMemoryIndex('reviewer', 'project', 'last\n', { cwd: race.cwd });
      expect(await clearMemory('reviewer', 'project', { cwd: race.cwd })).toBe(true);
      expect(await clearMemory('reviewer', 'project', { cwd: race.cwd })).toBe(false);
      expect(await snapshot(race.outside)).toEqual(before);
    },
  );
});
