import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type DelegateError } from '@delegate/core';
import { describe, expect, it, vi } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import type * as ProcDescriptors from './proc-descriptors.js';
import { clearMemory } from './clear-memory.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { listMemory } from './list-memory.js';
import { prepareAgentMemory } from './prepare-agent-memory.js';
import { readMemory } from './read-memory.js';
import { writeMemoryIndex } from './write-memory-index.js';

// A system without /proc/self/fd (macOS, Windows): memory cannot hold a folder open and
// look names up inside it, so it works by path, with the link checks made before each use.
vi.mock('./proc-descriptors.js', async (importOriginal) => ({
  ...(await importOriginal<typeof ProcDescriptors>()),
  hasProcDescriptors: () => false,
}));

const makeTempDir = useTempDirs();

async function setup() {
  const base = await makeTempDir();
  const paths = { cwd: join(base, 'project'), homeDir: join(base, 'home') };
  await writeMemoryIndex('reviewer', 'project', 'PROJECT-NOTES\n', paths);
  await writeMemoryIndex('reviewer', 'user', 'USER-NOTES\n', paths);
  return paths;
}

describe('memory without /proc/self/fd', () => {
  it('still writes memory', async () => {
    const paths = await setup();
    expect(existsSync(join(getAgentMemoryDir('reviewer', 'project', paths), 'MEMORY.md'))).toBe(
      true,
    );
  });

  it('clears project and user memory by path, never following a link inside the folder', async () => {
    const paths = await setup();
    const outside = join(paths.cwd, '..', 'outside');
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'keep.txt'), 'KEEP');
    await symlink(outside, join(getAgentMemoryDir('reviewer', 'project', paths), 'linked'));
    for (const scope of ['project', 'user'] as const) {
      expect(await clearMemory('reviewer', scope, paths)).toBe(true);
      expect(existsSync(getAgentMemoryDir('reviewer', scope, paths))).toBe(false);
    }
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('KEEP');
  });

  it('puts project memory in the prompt, and reads and lists it', async () => {
    const paths = await setup();
    const errors: DelegateError[] = [];
    const { prompt } = prepareAgentMemory('reviewer', 'project', {
      ...paths,
      onError: (error) => errors.push(error),
    });
    expect(prompt).toContain('PROJECT-NOTES');
    expect(errors).toEqual([]);
    expect((await readMemory('reviewer', 'project', paths)).index).toBe('PROJECT-NOTES\n');
    const entries = await listMemory({ ...paths, scopes: ['project'] });
    expect(entries.map((entry) => entry.folderName)).toEqual(['reviewer']);
  });

  it('still refuses a memory root linked out of the project', async () => {
    const paths = await setup();
    const outside = join(paths.cwd, '..', 'elsewhere');
    await mkdir(join(outside, 'reviewer'), { recursive: true });
    await writeFile(join(outside, 'reviewer', 'MEMORY.md'), 'OUTSIDE');
    await rm(join(paths.cwd, '.claude', 'agent-memory'), { recursive: true });
    await symlink(outside, join(paths.cwd, '.claude', 'agent-memory'));
    await expect(readMemory('reviewer', 'project', paths)).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
    await expect(clearMemory('reviewer', 'project', paths)).rejects.toMatchObject({
      code: 'PATH_ESCAPE',
    });
    expect(existsSync(join(outside, 'reviewer', 'MEMORY.md'))).toBe(true);
  });

  it('reads and lists user memory, whose folders the user owns', async () => {
    const paths = await setup();
    const { prompt } = prepareAgentMemory('reviewer', 'user', paths);
    expect(prompt).toContain('USER-NOTES');
    expect((await readMemory('reviewer', 'user', paths)).index).toBe('USER-NOTES\n');
    const entries = await listMemory({ ...paths, scopes: ['user'] });
    expect(entries.map((entry) => entry.folderName)).toEqual(['reviewer']);
  });
});
