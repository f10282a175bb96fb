import { spawnSync } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from './__fixtures__/temp-dirs.js';
import { readBoundedMemoryIndex } from './read-bounded-memory-index.js';

const makeTempDir = useTempDirs();
const limits = { maxLines: 200, maxBytes: 25 * 1024 };
const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const source = fileURLToPath(new URL('./read-bounded-memory-index.ts', import.meta.url));

describe('readBoundedMemoryIndex on files that are not plain files', () => {
  it('does not read through a symbolic link, so a file outside the folder never reaches the prompt', async () => {
    const base = await makeTempDir();
    await writeFile(join(base, 'passwd'), 'root:x:0:0:secret\n');
    await mkdir(join(base, 'agent'));
    await symlink(join(base, 'passwd'), join(base, 'agent', 'MEMORY.md'));
    const result = readBoundedMemoryIndex(join(base, 'agent', 'MEMORY.md'), limits);
    expect(result).toMatchObject({
      status: 'unreadable',
      reason: expect.stringMatching(/symbolic link/),
    });
    expect(JSON.stringify(result)).not.toMatch(/secret/);
  });

  it('returns at once for a FIFO instead of freezing the process', async () => {
    const base = await makeTempDir();
    const fifo = join(base, 'MEMORY.md');
    execFileSync('mkfifo', [fifo]);
    // The read is synchronous, so a hang would block this worker for good: run it in a child
    // that is killed after a few seconds.
    const script = `import { readBoundedMemoryIndex } from ${JSON.stringify(source)};
      process.stdout.write(JSON.stringify(readBoundedMemoryIndex(${JSON.stringify(fifo)}, { maxLines: 5, maxBytes: 100 })));`;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        cwd: repositoryRoot,
        timeout: 8_000,
        encoding: 'utf8',
        // Workspace packages resolve to their source: the test needs no build.
        env: { ...process.env, TSX_TSCONFIG_PATH: join(repositoryRoot, 'tsconfig.source.json') },
      },
    );
    expect(child.signal).toBeNull();
    expect(JSON.parse(child.stdout)).toMatchObject({
      status: 'unreadable',
      reason: 'it is not a regular file',
    });
  }, 15_000);
});
