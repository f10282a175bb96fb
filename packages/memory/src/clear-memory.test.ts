import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
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

  it('removes a whole tree, links inside it as links, and nothing they point to', async () => {
    const paths = await setup();
    const outside = join(paths.base, 'outside');
    await mkdir(join(outside, 'folder'), { recursive: true });
    await writeFile(join(outside, 'folder', 'precious.md'), 'keep me');
    await writeFile(join(outside, 'precious.txt'), 'keep me too');
    await writeMemoryIndex('code-reviewer', 'project', 'x', paths);
    const directory = getAgentMemoryDir('code-reviewer', 'project', paths);
    await mkdir(join(directory, 'topics', 'deep', 'deeper'), { recursive: true });
    await mkdir(join(directory, 'empty'));
    await writeFile(join(directory, 'topics', 'style.md'), 'style');
    await writeFile(join(directory, 'topics', 'deep', 'deeper', '.hidden'), 'hidden');
    await symlink(join(outside, 'folder'), join(directory, 'topics', 'folder-link'), 'dir');
    await symlink(join(outside, 'precious.txt'), join(directory, 'file-link'));
    execFileSync('mkfifo', [join(directory, 'topics', 'fifo')]);
    expect(await clearMemory('code-reviewer', 'project', paths)).toBe(true);
    expect(existsSync(directory)).toBe(false);
    expect(await readdir(getAgentMemoryRoot('project', paths))).toEqual([]);
    expect(await readFile(join(outside, 'folder', 'precious.md'), 'utf8')).toBe('keep me');
    expect(await readFile(join(outside, 'precious.txt'), 'utf8')).toBe('keep me too');
  });

  it('removes a file standing in place of the folder', async () => {
    const paths = await setup();
    const root = getAgentMemoryRoot('project', paths);
    await mkdir(root, { recursive: true });
    await writeFile(getAgentMemoryDir('code-reviewer', 'project', paths), 'stray');
    expect(await clearMemory('code-reviewer', 'project', paths)).toBe(true);
    expect(await readdir(root)).toEqual([]);
  });

  it('clears user memory in a linked user root (dotfiles), inside the link target', async () => {
    const paths = await setup();
    const dotfiles = join(paths.base, 'dotfiles');
    await mkdir(dotfiles);
    await mkdir(join(paths.homeDir, '.claude'), { recursive: true });
    await symlink(dotfiles, getAgentMemoryRoot('user', paths));
    await writeMemoryIndex('planner', 'user', 'x', paths);
    await writeMemoryIndex('code-reviewer', 'user', 'x', paths);
    expect(await clearMemory('planner', 'user', paths)).toBe(true);
    expect(await readdir(dotfiles)).toEqual(['code-reviewer']);
  });
});
