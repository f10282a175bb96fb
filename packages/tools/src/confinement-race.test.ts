import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  contentText,
  createTempDirectory,
  createTestContext,
  removeTempDirectory,
  testExtras,
} from './__fixtures__/test-context.js';
import { createGlobTool } from './glob-tool.js';
import { createGrepTool } from './grep-tool.js';
import { createReadTool } from './read-tool.js';
import { createWriteTool } from './write-tool.js';

// Real files and a real second process that swaps `root/sub` for a symbolic link to a
// folder outside the root and back while the tools run. Whatever the timing, no
// outside content, name or file may ever appear.
const swapper = fileURLToPath(new URL('./__fixtures__/swap-directory.mjs', import.meta.url));
const secret = 'OUTSIDE_SECRET_CONTENT';
const secretName = 'outside-only-name.txt';

let base: string;
let root: string;
let outside: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  base = await createTempDirectory();
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'sub'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'sub', 'file.txt'), 'NEEDLE inside\n');
  await writeFile(join(outside, 'file.txt'), `NEEDLE ${secret}\n`);
  await writeFile(join(outside, secretName), `NEEDLE ${secret}\n`);
  child = spawn(process.execPath, [swapper, join(root, 'sub'), outside], { stdio: 'ignore' });
});

afterEach(async () => {
  if (child !== undefined && child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  await removeTempDirectory(base);
});

async function settled<T>(promise: Promise<T>): Promise<T | undefined> {
  return promise.catch(() => undefined);
}

describe('file tools while a directory is swapped for a symbolic link', () => {
  it(
    'Grep and Read never return content of files outside the roots',
    { timeout: 180_000 },
    async () => {
      const context = createTestContext({ cwd: root });
      const grep = createGrepTool();
      const read = createReadTool();
      const leaks: string[] = [];
      for (let round = 0; round < 60; round++) {
        const found = await settled(
          grep.call({ pattern: 'NEEDLE', output_mode: 'content' }, context, testExtras),
        );
        if (found && contentText(found).includes(secret)) leaks.push(contentText(found));
        for (let each = 0; each < 5; each++) {
          const shown = await settled(
            read.call({ file_path: 'sub/file.txt' }, context, testExtras),
          );
          if (shown && contentText(shown).includes(secret)) leaks.push(contentText(shown));
        }
      }
      expect(leaks).toEqual([]);
    },
  );

  it('Glob never lists names outside the roots', { timeout: 180_000 }, async () => {
    const context = createTestContext({ cwd: root });
    const glob = createGlobTool();
    const leaks: string[] = [];
    for (let round = 0; round < 80; round++) {
      const listed = await settled(glob.call({ pattern: '**/*' }, context, testExtras));
      const names = listed?.data?.filenames ?? [];
      leaks.push(...names.filter((name) => name.includes(secretName)));
    }
    expect(leaks).toEqual([]);
  });

  it('Write never creates a file outside the roots', { timeout: 180_000 }, async () => {
    const context = createTestContext({ cwd: root });
    const write = createWriteTool();
    for (let round = 0; round < 300; round++) {
      await settled(
        write.call({ file_path: `sub/deeper/new-${round}.txt`, content: 'x' }, context, testExtras),
      );
      await settled(
        write.call({ file_path: `sub/new-${round}.txt`, content: 'x' }, context, testExtras),
      );
    }
    expect((await readdir(outside)).sort()).toEqual(['file.txt', secretName]);
  });
});
