import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useSwapper } from './__fixtures__/swapper.js';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { appendMemoryEntry } from './append-memory-entry.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { writeMemoryIndex } from './write-memory-index.js';

// A second process swaps a memory folder (or its scope root) for a symbolic link to a
// folder outside the project and back while MEMORY.md is written: nothing, not even a
// temporary file or an empty folder, may appear outside.
const swapper = useSwapper();
const makeTempDir = useTempDirs();

async function race(swapped: (cwd: string) => string): Promise<string[]> {
  const base = await makeTempDir();
  const cwd = join(base, 'project');
  const outside = join(base, 'outside');
  await mkdir(outside, { recursive: true });
  await writeMemoryIndex('reviewer', 'project', 'first\n', { cwd });
  swapper.start(swapped(cwd), outside);
  for (let round = 0; round < 400; round++) {
    const write =
      round % 2 === 0
        ? writeMemoryIndex('reviewer', 'project', `round ${round}\n`, { cwd })
        : appendMemoryEntry('reviewer', 'project', `entry ${round}`, { cwd });
    await write.catch(() => undefined);
  }
  await swapper.stop();
  return readdir(outside, { recursive: true });
}

describe('memory writes while a folder is swapped for a symbolic link', () => {
  it('leave nothing outside when the agent folder is swapped', { timeout: 180_000 }, async () => {
    expect(await race((cwd) => getAgentMemoryDir('reviewer', 'project', { cwd }))).toEqual([]);
  });

  it('leave nothing outside when the scope root is swapped', { timeout: 180_000 }, async () => {
    expect(await race((cwd) => join(cwd, '.claude', 'agent-memory'))).toEqual([]);
  });
});
