import { link, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import {
  contentText,
  createTempDirectory,
  createTestContext,
  removeTempDirectory,
  testExtras,
} from './__fixtures__/test-context.js';
import { rejection } from './__fixtures__/expect-delegate-error.js';
import { createEditTool } from './edit-tool.js';
import { createGlobTool } from './glob-tool.js';
import { createGrepTool } from './grep-tool.js';
import { createReadTool } from './read-tool.js';
import { createWriteTool } from './write-tool.js';

let base: string;
let root: string;
let outsideFile: string;

beforeEach(async () => {
  base = await createTempDirectory();
  root = join(base, 'root');
  await mkdir(root);
  outsideFile = join(base, 'secret.txt');
  await writeFile(outsideFile, 'SECRET outside\n');
  await writeFile(join(root, 'plain.txt'), 'plain\n');
  // A hard link inside the root to a file outside it.
  await link(outsideFile, join(root, 'linked.txt'));
});
afterEach(() => removeTempDirectory(base));

describe('files with other hard links', () => {
  it('Read refuses them (the other name may be outside), unless allowHardLinks is set', async () => {
    const context = createTestContext({ cwd: root });
    const error = await rejection(
      createReadTool().call({ file_path: 'linked.txt' }, context, testExtras),
    );
    expect(error.code).toBe('PATH_ESCAPE');
    expect(error.message).toContain('hard links');
    expect(error.message).not.toContain('SECRET');
    const allowed = await createReadTool({ allowHardLinks: true }).call(
      { file_path: 'linked.txt' },
      context,
      testExtras,
    );
    expect(contentText(allowed)).toContain('SECRET');
  });

  it('Write and Edit refuse to write through them, leaving the outside file unchanged', async () => {
    const context = createTestContext({ cwd: root });
    await createReadTool({ allowHardLinks: true }).call(
      { file_path: 'linked.txt' },
      context,
      testExtras,
    );
    const written = await rejection(
      createWriteTool().call(
        { file_path: 'linked.txt', content: 'overwritten' },
        context,
        testExtras,
      ),
    );
    expect(written.code).toBe('PATH_ESCAPE');
    const edited = await rejection(
      createEditTool().call(
        { file_path: 'linked.txt', old_string: 'SECRET', new_string: 'CHANGED' },
        context,
        testExtras,
      ),
    );
    expect(edited.code).toBe('PATH_ESCAPE');
    expect(await readFile(outsideFile, 'utf8')).toBe('SECRET outside\n');
  });

  it('Grep skips them', async () => {
    const context = createTestContext({ cwd: root });
    const found = await createGrepTool().call({ pattern: 'SECRET|plain' }, context, testExtras);
    expect(found.data?.filenames).toEqual([join(root, 'plain.txt')]);
  });
});

describe('file-system errors', () => {
  it('become DelegateErrors naming the path, for every file tool', async () => {
    const context = createTestContext({ cwd: root });
    const longName = 'n'.repeat(300);
    const calls: Array<[string, () => Promise<unknown>]> = [
      [
        'Read ENOTDIR',
        () => createReadTool().call({ file_path: 'plain.txt/x' }, context, testExtras),
      ],
      [
        'Read ENAMETOOLONG',
        () => createReadTool().call({ file_path: longName }, context, testExtras),
      ],
      [
        'Write ENOTDIR',
        () =>
          createWriteTool().call({ file_path: 'plain.txt/x', content: 'x' }, context, testExtras),
      ],
      [
        'Write ENAMETOOLONG',
        () =>
          createWriteTool().call({ file_path: `${longName}/x`, content: 'x' }, context, testExtras),
      ],
      [
        'Edit ENOTDIR',
        () =>
          createEditTool().call(
            { file_path: 'plain.txt/x', old_string: 'a', new_string: 'b' },
            context,
            testExtras,
          ),
      ],
      [
        'Glob ENOTDIR',
        () => createGlobTool().call({ pattern: '*', path: 'plain.txt/x' }, context, testExtras),
      ],
      [
        'Grep ENAMETOOLONG',
        () => createGrepTool().call({ pattern: 'x', path: longName }, context, testExtras),
      ],
    ];
    for (const [what, call] of calls) {
      const error = await call().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect({ what, delegate: DelegateError.isInstance(error) }).toEqual({ what, delegate: true });
      expect({ what, names: (error as Error).message.includes(root) }).toEqual({
        what,
        names: true,
      });
    }
  });
});
