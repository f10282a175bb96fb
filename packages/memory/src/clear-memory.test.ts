import { existsSync } from 'node:fs';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { clearMemory } from './clear-memory.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { getAgentMemoryRoot } from './get-agent-memory-root.js';
import { listMemory } from './list-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

const makeTempDir = useTempDirs();

async function setup(): Promise<{ base: string; cwd: string; homeDir: string }> {
  const base = await makeTempDir();
  return { base, cwd: join(base, 'project'), homeDir: join(base, 'home') };
}

describe('clearMemory', () => {
  it("removes one agent's folder in one scope and nothing else", async () => {
    const paths = await setup();
    await writeMemoryIndex('code-reviewer', 'project', 'x', paths);
    await writeMemoryIndex('code-reviewer', 'user', 'x', paths);
    await writeMemoryIndex('planner', 'project', 'x', paths);
    expect(await clearMemory('code-reviewer', 'project', paths)).toBe(true);
    expect(existsSync(getAgentMemoryDir('code-reviewer', 'project', paths))).toBe(false);
    const left = (await listMemory(paths)).map((entry) => `${entry.scope}:${entry.agentType}`);
    expect(left).toEqual(['user:code-reviewer', 'project:planner']);
  });

  it('returns false when there is nothing to clear', async () => {
    const paths = await setup();
    expect(await clearMemory('code-reviewer', 'local', paths)).toBe(false);
  });

  it.each(['..', '.', '../..', '../../..', '/', '\\', '../project', 'C:\\', '*'])(
    'never removes anything outside the scope root for %j',
    async (agentType) => {
      const paths = await setup();
      await writeMemoryIndex('code-reviewer', 'project', 'keep', paths);
      await writeFile(join(paths.base, 'sentinel'), 'keep');
      await writeMemoryIndex(agentType, 'project', 'own folder', paths);
      expect(await clearMemory(agentType, 'project', paths)).toBe(true);
      expect(existsSync(join(paths.base, 'sentinel'))).toBe(true);
      expect(await readdir(getAgentMemoryRoot('project', paths))).toEqual(['code-reviewer']);
    },
  );

  it('removes a symbolic link in place of the folder without touching its target', async () => {
    const paths = await setup();
    const outside = join(paths.base, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'precious.md'), 'keep me');
    const root = getAgentMemoryRoot('project', paths);
    await mkdir(root, { recursive: true });
    await symlink(outside, getAgentMemoryDir('code-reviewer', 'project', paths), 'dir');
    expect(await clearMemory('code-reviewer', 'project', paths)).toBe(true);
    expect(await readdir(root)).toEqual([]);
    expect(await readdir(outside)).toEqual(['precious.md']);
  });
});
