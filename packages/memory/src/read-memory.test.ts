import { mkdir, symlink, writeFile } from 'node:fs/promises';
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

  it('lists files in subfolders and skips symbolic links, never following one', async () => {
    const base = await makeTempDir();
    const cwd = join(base, 'project');
    const outside = join(base, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret.md'), 'secret');
    await writeMemoryIndex('planner', 'project', '- index\n', { cwd });
    const directory = getAgentMemoryDir('planner', 'project', { cwd });
    await mkdir(join(directory, 'topics', 'deep'), { recursive: true });
    await writeFile(join(directory, 'topics', 'deep', 'a.md'), 'abc');
    await symlink(outside, join(directory, 'topics', 'linked'), 'dir');
    await symlink(join(outside, 'secret.md'), join(directory, 'secret.md'));
    const snapshot = await readMemory('planner', 'project', { cwd });
    expect(snapshot.index).toBe('- index\n');
    expect(snapshot.files).toEqual([
      { path: 'MEMORY.md', size: 8 },
      { path: 'topics/deep/a.md', size: 3 },
    ]);
  });

  it('names the memory folder, not a descriptor, when MEMORY.md cannot be read', async () => {
    const cwd = await makeTempDir();
    const directory = getAgentMemoryDir('planner', 'project', { cwd });
    await mkdir(join(directory, 'MEMORY.md'), { recursive: true });
    const error = await readMemory('planner', 'project', { cwd }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toContain(join(directory, 'MEMORY.md'));
    expect(error?.message).not.toContain('/proc/self/fd');
  });
});
