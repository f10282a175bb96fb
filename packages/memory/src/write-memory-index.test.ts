import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DelegateError } from '@delegate/core';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { getAgentMemoryDir } from './get-agent-memory-dir.js';
import { writeMemoryIndex } from './write-memory-index.js';

const makeTempDir = useTempDirs();

describe('writeMemoryIndex', () => {
  it('creates the folder and writes MEMORY.md, replacing what was there', async () => {
    const cwd = await makeTempDir();
    const file = await writeMemoryIndex('code-reviewer', 'project', 'first\n', { cwd });
    expect(file).toBe(join(cwd, '.claude', 'agent-memory', 'code-reviewer', 'MEMORY.md'));
    expect(await readFile(file, 'utf8')).toBe('first\n');
    await writeMemoryIndex('code-reviewer', 'project', 'second\n', { cwd, fsync: true });
    expect(await readFile(file, 'utf8')).toBe('second\n');
    expect(await readdir(join(cwd, '.claude', 'agent-memory', 'code-reviewer'))).toEqual([
      'MEMORY.md',
    ]);
  });

  it('never leaves a torn file when 50 writers race while a reader loops', async () => {
    const cwd = await makeTempDir();
    const initial = 'initial\n';
    const file = await writeMemoryIndex('code-reviewer', 'local', initial, { cwd });
    // Distinct contents of different sizes: any mix of two equals neither.
    const contents = Array.from({ length: 50 }, (_, writer) => {
      const line = `writer ${writer}: ${String.fromCharCode(97 + (writer % 26)).repeat(60)}\n`;
      return line.repeat(400 + writer * 23);
    });
    const allowed = new Set([initial, ...contents]);
    const minimumReads = 100;

    // Writers keep rewriting until the reader has looked often enough, so the two overlap.
    let reads = 0;
    let readerDone = false;
    const writes: number[] = contents.map(() => 0);
    const writers = contents.map(async (content, writer) => {
      while (!readerDone || writes[writer] === 0) {
        await writeMemoryIndex('code-reviewer', 'local', content, { cwd });
        writes[writer] = (writes[writer] ?? 0) + 1;
      }
    });
    const torn: number[] = [];
    try {
      while (reads < minimumReads) {
        const seen = await readFile(file, 'utf8');
        reads++;
        if (!allowed.has(seen)) torn.push(seen.length);
      }
    } finally {
      readerDone = true;
    }
    await Promise.all(writers);

    expect(torn).toEqual([]);
    expect(writes.every((count) => count > 0)).toBe(true);
    expect(contents).toContain(await readFile(file, 'utf8'));
    expect(await readdir(getAgentMemoryDir('code-reviewer', 'local', { cwd }))).toEqual([
      'MEMORY.md',
    ]);
  });

  it('reports a folder it cannot create with its path, and leaves no temporary file', async () => {
    const base = await makeTempDir();
    await writeFile(join(base, 'file'), 'x');
    const attempt = writeMemoryIndex('code-reviewer', 'project', 'x', { cwd: join(base, 'file') });
    await expect(attempt).rejects.toBeInstanceOf(DelegateError);
    await expect(attempt).rejects.toThrow(join(base, 'file'));
    expect(await readdir(base)).toEqual(['file']);
  });

  it("says a file stands where the agent's folder belongs, and leaves it as it was", async () => {
    const cwd = await makeTempDir();
    const directory = getAgentMemoryDir('code-reviewer', 'project', { cwd });
    await mkdir(join(directory, '..'), { recursive: true });
    await writeFile(directory, 'not a folder');
    const error = await writeMemoryIndex('code-reviewer', 'project', 'x', { cwd }).catch(
      (caught: unknown) => caught,
    );
    expect(DelegateError.hasCode(error, 'FILE_SYSTEM_ERROR')).toBe(true);
    expect((error as Error).message).toBe(
      `Cannot write in "${directory}": it is a file, where the memory folder belongs. Move or delete it, then retry.`,
    );
    expect(await readFile(directory, 'utf8')).toBe('not a folder');
  });

  it('removes its temporary file when the rename fails', async () => {
    const cwd = await makeTempDir();
    const directory = getAgentMemoryDir('code-reviewer', 'project', { cwd });
    // A non-empty folder named MEMORY.md cannot be replaced by a file.
    await mkdir(join(directory, 'MEMORY.md', 'inside'), { recursive: true });
    await expect(writeMemoryIndex('code-reviewer', 'project', 'x', { cwd })).rejects.toThrow(
      /write the memory index/,
    );
    expect(await readdir(directory)).toEqual(['MEMORY.md']);
  });

  it('writes traversal attempts inside the memory root only', async () => {
    const base = await makeTempDir();
    const cwd = join(base, 'project');
    for (const agentType of ['../../escape', '..', '/abs', 'C:\\x']) {
      const file = await writeMemoryIndex(agentType, 'project', agentType, { cwd });
      expect(file.startsWith(join(cwd, '.claude', 'agent-memory') + '/')).toBe(true);
    }
    expect(await readdir(base)).toEqual(['project']);
    expect(await readdir(join(cwd, '.claude'))).toEqual(['agent-memory']);
  });
});
