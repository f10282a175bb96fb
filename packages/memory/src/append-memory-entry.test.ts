import { mkdir, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { appendMemoryEntry } from './append-memory-entry.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { writeMemoryIndex } from './write-memory-index.js';

const makeTempDir = useTempDirs();

describe('appendMemoryEntry', () => {
  it('creates MEMORY.md and adds entries on their own lines', async () => {
    const cwd = await makeTempDir();
    await writeMemoryIndex('code-reviewer', 'project', '# Index\n- first', { cwd });
    const file = await appendMemoryEntry('code-reviewer', 'project', '- second', { cwd });
    await appendMemoryEntry('code-reviewer', 'project', '- third\n', { cwd });
    expect(await readFile(file, 'utf8')).toBe('# Index\n- first\n- second\n- third\n');
  });

  it('starts a missing MEMORY.md with the entry', async () => {
    const cwd = await makeTempDir();
    const file = await appendMemoryEntry('planner', 'local', '- only', { cwd });
    expect(await readFile(file, 'utf8')).toBe('- only\n');
  });

  it('keeps every one of 50 concurrent appends exactly once', async () => {
    const cwd = await makeTempDir();
    const entries = Array.from({ length: 50 }, (_, index) => `- entry ${index}`);
    await Promise.all(
      entries.map((entry) =>
        appendMemoryEntry('code-reviewer', 'user', entry, { cwd, homeDir: cwd }),
      ),
    );
    const lines = (
      await readFile(
        join(getAgentMemoryDir('code-reviewer', 'user', { cwd, homeDir: cwd }), 'MEMORY.md'),
        'utf8',
      )
    )
      .split('\n')
      .filter((line) => line.length > 0);
    expect(lines.sort()).toEqual([...entries].sort());
    expect(
      await readdir(getAgentMemoryDir('code-reviewer', 'user', { cwd, homeDir: cwd })),
    ).toEqual(['MEMORY.md']);
  });

  it('queues appends to one file under two spellings of its project, and a write among them', async () => {
    const cwd = await makeTempDir();
    const alias = `${cwd}-alias`;
    await symlink(cwd, alias);
    try {
      const entries = Array.from({ length: 40 }, (_, index) => `- entry ${index}`);
      await Promise.all(
        entries.map((entry, index) =>
          appendMemoryEntry('code-reviewer', 'project', entry, { cwd: index % 2 ? alias : cwd }),
        ),
      );
      const file = join(getAgentMemoryDir('code-reviewer', 'project', { cwd }), 'MEMORY.md');
      const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line.length > 0);
      expect(lines.sort()).toEqual([...entries].sort());
      // A write queued after an append replaces what the append wrote; an append after it adds.
      await Promise.all([
        appendMemoryEntry('code-reviewer', 'project', '- appended', { cwd }),
        writeMemoryIndex('code-reviewer', 'project', '# New index\n', { cwd: alias }),
        appendMemoryEntry('code-reviewer', 'project', '- after', { cwd }),
      ]);
      expect(await readFile(file, 'utf8')).toBe('# New index\n- after\n');
    } finally {
      await rm(alias, { force: true });
    }
  });

  it('rejects an empty entry', async () => {
    const cwd = await makeTempDir();
    await expect(
      appendMemoryEntry('code-reviewer', 'project', '   ', { cwd }),
    ).rejects.toBeInstanceOf(DelegateError);
  });

  it('keeps the queue moving after an append fails on disk', async () => {
    const cwd = await makeTempDir();
    const directory = getAgentMemoryDir('code-reviewer', 'project', { cwd });
    // A folder where MEMORY.md should be makes the read inside the queue fail.
    await mkdir(join(directory, 'MEMORY.md'), { recursive: true });
    const failing = appendMemoryEntry('code-reviewer', 'project', '- lost', { cwd });
    const queued = failing
      .catch(() => undefined)
      .then(async () => {
        await rm(join(directory, 'MEMORY.md'), { recursive: true });
        return appendMemoryEntry('code-reviewer', 'project', '- kept', { cwd });
      });
    await expect(failing).rejects.toThrow(/append to the memory index/);
    const file = await queued;
    expect(await readFile(file, 'utf8')).toBe('- kept\n');
  });
});
