import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { link, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { appendMemoryEntry } from './append-memory-entry.js';
import { checkMemoryDirectory } from './check-memory-directory.js';
import { clearMemory } from './clear-memory.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { getAgentMemoryRoot } from './get-agent-memory-root.js';
import { listMemory } from './list-memory.js';
import { loadAgentMemoryPrompt } from './load-agent-memory-prompt.js';
import { prepareAgentMemory } from './prepare-agent-memory.js';
import { readMemory } from './read-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

const makeTempDir = useTempDirs();

async function setup() {
  const base = await makeTempDir();
  const paths = { cwd: join(base, 'project'), homeDir: join(base, 'home') };
  const outside = join(base, 'outside');
  await mkdir(paths.cwd, { recursive: true });
  await mkdir(join(outside, 'reviewer'), { recursive: true });
  await writeFile(join(outside, 'reviewer', 'MEMORY.md'), 'victim memory: secret\n');
  return { base, paths, outside };
}

/** Links the project's `.claude/agent-memory` to a folder outside the project. */
async function linkProjectRoot(paths: { cwd: string }, target: string): Promise<void> {
  await mkdir(join(paths.cwd, '.claude'), { recursive: true });
  await symlink(target, getAgentMemoryRoot('project', paths));
}

describe('checkMemoryDirectory', () => {
  it('passes for folders that do not exist yet and for real folders', async () => {
    const { paths } = await setup();
    const check = (scope: 'user' | 'project') => ({
      scope,
      root: getAgentMemoryRoot(scope, paths),
      directory: getAgentMemoryDir('reviewer', scope, paths),
      cwd: paths.cwd,
    });
    expect(() => checkMemoryDirectory(check('project'))).not.toThrow();
    await mkdir(check('user').directory, { recursive: true });
    expect(() => checkMemoryDirectory(check('user'))).not.toThrow();
  });

  it('lets the user root be a link (dotfiles), but not an agent folder inside it', async () => {
    const { base, paths, outside } = await setup();
    const dotfiles = join(base, 'dotfiles');
    await mkdir(dotfiles);
    await mkdir(join(paths.homeDir, '.claude'), { recursive: true });
    await symlink(dotfiles, getAgentMemoryRoot('user', paths));
    await writeMemoryIndex('planner', 'user', 'fine', paths);
    expect(await readFile(join(dotfiles, 'planner', 'MEMORY.md'), 'utf8')).toBe('fine');
    await symlink(join(outside, 'reviewer'), join(dotfiles, 'reviewer'));
    await expect(writeMemoryIndex('reviewer', 'user', 'x', paths)).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
  });
});

describe('agent memory never leaves its root through a symbolic link', () => {
  it('does not clear a folder outside the project when the project root is a link', async () => {
    const { paths, outside } = await setup();
    await linkProjectRoot(paths, outside);
    await expect(clearMemory('reviewer', 'project', paths)).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
    expect(existsSync(join(outside, 'reviewer', 'MEMORY.md'))).toBe(true);
  });

  it('does not write, append or list through a project root linked outside', async () => {
    const { paths, outside } = await setup();
    await linkProjectRoot(paths, outside);
    await expect(
      writeMemoryIndex('reviewer', 'project', 'overwritten', paths),
    ).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
    await expect(appendMemoryEntry('reviewer', 'project', 'more', paths)).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
    await expect(listMemory({ ...paths, scopes: ['project'] })).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
    expect(await readFile(join(outside, 'reviewer', 'MEMORY.md'), 'utf8')).toBe(
      'victim memory: secret\n',
    );
  });

  it('refuses a project root linked to another folder of the project (its .git, say)', async () => {
    const { paths } = await setup();
    // A cloned repository can hold `.claude/agent-memory -> ../.git`: an agent type `hooks`
    // would then keep its memory, which it may write without asking, in `.git/hooks`.
    const hooks = join(paths.cwd, '.git', 'hooks');
    await mkdir(hooks, { recursive: true });
    await writeFile(join(hooks, 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    for (const scope of ['project', 'local'] as const) {
      await mkdir(join(paths.cwd, '.claude'), { recursive: true });
      await symlink('../.git', getAgentMemoryRoot(scope, paths));
      const prepared = prepareAgentMemory('hooks', scope, { ...paths, onError: () => undefined });
      await expect(prepared.ready, scope).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
      await expect(writeMemoryIndex('hooks', scope, 'x', paths), scope).rejects.toMatchObject({
        code: 'PATH_ESCAPE',
      });
      await expect(clearMemory('hooks', scope, paths), scope).rejects.toMatchObject({
        code: 'PATH_ESCAPE',
      });
    }
    expect((await readdir(hooks)).sort()).toEqual(['pre-commit']);
    expect(await readFile(join(hooks, 'pre-commit'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
  });

  it('keeps another folder out of the prompt when an agent folder is a link, and creates nothing there', async () => {
    const { paths, outside } = await setup();
    const root = getAgentMemoryRoot('local', paths);
    await mkdir(root, { recursive: true });
    await symlink(join(outside, 'reviewer'), join(root, 'reviewer'));
    const errors: unknown[] = [];
    const prepared = prepareAgentMemory('reviewer', 'local', {
      ...paths,
      onError: (error) => errors.push(error),
    });
    expect(prepared.prompt).not.toMatch(/victim memory/);
    expect(prepared.prompt).toMatch(/could not be read/);
    await expect(prepared.ready).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
    expect(errors).toEqual([expect.objectContaining({ code: 'PATH_ESCAPE' })]);
    await expect(readMemory('reviewer', 'local', paths)).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
    expect(await readdir(join(outside, 'reviewer'))).toEqual(['MEMORY.md']);
  });

  it('removes a linked agent folder as a link, leaving its target', async () => {
    const { paths, outside } = await setup();
    const root = getAgentMemoryRoot('project', paths);
    await mkdir(root, { recursive: true });
    await symlink(join(outside, 'reviewer'), join(root, 'reviewer'));
    expect(await clearMemory('reviewer', 'project', paths)).toBe(true);
    expect(existsSync(join(outside, 'reviewer', 'MEMORY.md'))).toBe(true);
  });
});

describe('reading a whole MEMORY.md', () => {
  it('refuses to copy a linked file into memory when appending', async () => {
    const { paths, outside } = await setup();
    const directory = getAgentMemoryDir('reviewer', 'project', paths);
    await mkdir(directory, { recursive: true });
    await symlink(join(outside, 'reviewer', 'MEMORY.md'), join(directory, 'MEMORY.md'));
    await expect(appendMemoryEntry('reviewer', 'project', 'new', paths)).rejects.toMatchObject({
      code: 'FILE_SYSTEM_ERROR',
      message: expect.stringMatching(/symbolic link/),
    });
    await expect(readMemory('reviewer', 'project', paths)).rejects.toMatchObject({
      message: expect.stringMatching(/symbolic link/),
    });
  });

  it('never reads a MEMORY.md hard-linked to a file outside, into the prompt or otherwise', async () => {
    const { paths, outside } = await setup();
    const directory = getAgentMemoryDir('reviewer', 'project', paths);
    await mkdir(directory, { recursive: true });
    await writeFile(join(outside, 'secret.txt'), 'OUTSIDE-SECRET\n');
    await link(join(outside, 'secret.txt'), join(directory, 'MEMORY.md'));
    await expect(readMemory('reviewer', 'project', paths)).rejects.toMatchObject({
      message: expect.stringMatching(/hard links/),
    });
    const prompt = loadAgentMemoryPrompt('reviewer', 'project', paths);
    expect(prompt).not.toContain('OUTSIDE-SECRET');
    // Appending replaces the memory file; the outside file is left as it was.
    await expect(appendMemoryEntry('reviewer', 'project', 'new', paths)).rejects.toMatchObject({
      message: expect.stringMatching(/hard links/),
    });
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('OUTSIDE-SECRET\n');
  });

  it('refuses a FIFO instead of waiting forever', { timeout: 5_000 }, async () => {
    const { paths } = await setup();
    const directory = getAgentMemoryDir('reviewer', 'project', paths);
    await mkdir(directory, { recursive: true });
    execFileSync('mkfifo', [join(directory, 'MEMORY.md')]);
    await expect(appendMemoryEntry('reviewer', 'project', 'new', paths)).rejects.toMatchObject({
      message: expect.stringMatching(/not a regular file/),
    });
    await expect(readMemory('reviewer', 'project', paths)).rejects.toMatchObject({
      message: expect.stringMatching(/not a regular file/),
    });
  });

  it('refuses a MEMORY.md over 4 MiB rather than loading it whole', async () => {
    const { paths } = await setup();
    await writeMemoryIndex('reviewer', 'project', 'x'.repeat(4 * 1024 * 1024 + 1), paths);
    await expect(readMemory('reviewer', 'project', paths)).rejects.toMatchObject({
      message: expect.stringMatching(/over the 4194304-byte limit/),
    });
  });
});
