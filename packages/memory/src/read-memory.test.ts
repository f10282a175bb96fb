import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { readMemory } from './read-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

const makeTempDir = useTempDirs();

describe('readMemory', () => {
  it('reports a missing folder as not existing', async () => {
    const cwd = await makeTempDir();
    const snapshot = await readMemory('code-reviewer', 'project', { cwd });
    expect(snapshot).toMatchObject({ exists: false, index: undefined, files: [] });
    expect(snapshot.directory).toBe(getAgentMemoryDir('code-reviewer', 'project', { cwd }));
  });

  it('returns the whole MEMORY.md, however long, and every file', async () => {
    const cwd = await makeTempDir();
    const long = Array.from({ length: 500 }, (_, index) => `- line ${index}`).join('\n');
    await writeMemoryIndex('code-reviewer', 'local', long, { cwd });
    const directory = getAgentMemoryDir('code-reviewer', 'local', { cwd });
    await writeFile(join(directory, 'testing.md'), 'abc');
    const snapshot = await readMemory('code-reviewer', 'local', { cwd });
    expect(snapshot.exists).toBe(true);
    expect(snapshot.index).toBe(long);
    expect(snapshot.indexFile).toBe(join(directory, 'MEMORY.md'));
    expect(snapshot.files).toEqual([
      { path: 'MEMORY.md', size: Buffer.byteLength(long) },
      { path: 'testing.md', size: 3 },
    ]);
  });

  it('lists topic files even when there is no MEMORY.md', async () => {
    const cwd = await makeTempDir();
    const directory = getAgentMemoryDir('planner', 'project', { cwd });
    await mkdir(directory, { recursive: true });
    await writeFile(join(directory, 'notes.md'), 'hello');
    const snapshot = await readMemory('planner', 'project', { cwd });
    expect(snapshot).toMatchObject({
      exists: true,
      index: undefined,
      files: [{ path: 'notes.md', size: 5 }],
    });
  });
});
