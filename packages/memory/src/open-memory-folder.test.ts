import { readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { type MemoryDirectoryCheck } from './check-memory-directory.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { getAgentMemoryRoot } from './get-agent-memory-root.js';
import { openMemoryDirectory, openMemoryRoot } from './open-memory-folder.js';
import { showDescriptorPaths } from './proc-descriptors.js';
import { writeMemoryIndex } from './write-memory-index.js';

const makeTempDir = useTempDirs();

async function setup(scope: 'project' | 'user' = 'project') {
  const base = await makeTempDir();
  const paths = { cwd: join(base, 'project'), homeDir: join(base, 'home') };
  const check: MemoryDirectoryCheck = {
    scope,
    root: getAgentMemoryRoot(scope, paths),
    directory: getAgentMemoryDir('reviewer', scope, paths),
    cwd: paths.cwd,
  };
  return { base, paths, check };
}

function escapeCode(call: () => unknown): string | undefined {
  try {
    call();
  } catch (error) {
    return DelegateError.isInstance(error) ? error.code : 'not a DelegateError';
  }
  return undefined;
}

describe('openMemoryDirectory', () => {
  it('opens the agent folder, and reads inside it through the descriptor', async () => {
    const { paths, check } = await setup();
    await writeMemoryIndex('reviewer', 'project', 'inside\n', paths);
    const folder = openMemoryDirectory(check);
    try {
      expect(folder?.shown).toBe(check.directory);
      expect(readFileSync(folder?.at('MEMORY.md') ?? '', 'utf8')).toBe('inside\n');
    } finally {
      folder?.close();
      folder?.close(); // a second close does nothing
    }
  });

  it('finds nothing when the project, a folder on the way or the agent folder is missing', async () => {
    const { paths, check } = await setup();
    expect(openMemoryDirectory(check)).toBeUndefined();
    await mkdir(join(paths.cwd, '.claude'), { recursive: true });
    expect(openMemoryDirectory(check)).toBeUndefined();
    await mkdir(check.root, { recursive: true });
    expect(openMemoryDirectory(check)).toBeUndefined();
    await writeFile(check.directory, 'a file where the folder belongs');
    expect(openMemoryDirectory(check)).toBeUndefined();
  });

  it.each(['.claude', 'agent-memory', 'reviewer'])(
    'refuses a %s folder that is a symbolic link, even inside the project',
    async (linked) => {
      const { paths, check } = await setup();
      const elsewhere = join(paths.cwd, 'elsewhere');
      await mkdir(join(elsewhere, 'agent-memory', 'reviewer'), { recursive: true });
      const claude = join(paths.cwd, '.claude');
      if (linked === '.claude') {
        await symlink(elsewhere, claude);
      } else if (linked === 'agent-memory') {
        await mkdir(claude);
        await symlink(join(elsewhere, 'agent-memory'), check.root);
      } else {
        await mkdir(check.root, { recursive: true });
        await symlink(join(elsewhere, 'agent-memory', 'reviewer'), check.directory);
      }
      expect(escapeCode(() => openMemoryDirectory(check))).toBe('PATH_ESCAPE');
    },
  );

  it('follows a project spelled through a link, and a linked user root', async () => {
    const { base, paths, check } = await setup();
    await writeMemoryIndex('reviewer', 'project', 'x', paths);
    const alias = join(base, 'alias');
    await symlink(paths.cwd, alias);
    const aliased = openMemoryDirectory({
      ...check,
      cwd: alias,
      root: join(alias, '.claude', 'agent-memory'),
      directory: join(alias, '.claude', 'agent-memory', 'reviewer'),
    });
    expect(aliased).toBeDefined();
    aliased?.close();

    const user = await setup('user');
    const dotfiles = join(user.base, 'dotfiles');
    await mkdir(join(dotfiles, 'reviewer'), { recursive: true });
    await mkdir(join(user.paths.homeDir, '.claude'), { recursive: true });
    await symlink(dotfiles, user.check.root);
    const root = openMemoryRoot(user.check);
    expect(root).toBeDefined();
    root?.close();
    const folder = openMemoryDirectory(user.check);
    expect(folder).toBeDefined();
    folder?.close();
  });

  it('refuses an agent folder that is not directly inside its root', async () => {
    const { check } = await setup();
    const deeper = { ...check, directory: join(check.root, 'a', 'b') };
    expect(escapeCode(() => openMemoryDirectory(deeper))).toBe('PATH_ESCAPE');
  });
});

describe('showDescriptorPaths', () => {
  it('names an open memory folder by its path in a system error message', async () => {
    const { paths, check } = await setup();
    await writeMemoryIndex('reviewer', 'project', 'x', paths);
    const folder = openMemoryDirectory(check);
    expect(folder).toBeDefined();
    if (folder === undefined) return;
    const message = `ENOENT: no such file or directory, open '${folder.at('topic.md')}'`;
    expect(showDescriptorPaths(message)).toBe(
      `ENOENT: no such file or directory, open '${join(check.directory, 'topic.md')}'`,
    );
    folder.close();
    // Errors are often put into words after the folders they went through were let go.
    expect(showDescriptorPaths(message)).toContain(join(check.directory, 'topic.md'));
    expect(showDescriptorPaths('/proc/self/fd/999999/x')).toBe('/proc/self/fd/999999/x');
  });
});
