import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import {
  contentText,
  createTempDirectory,
  createTestContext,
  removeTempDirectory,
  testExtras,
} from './__fixtures__/test-context.js';
import { createGlobTool } from './glob-tool.js';

let directory: string;
beforeEach(async () => {
  directory = await createTempDirectory();
});
afterEach(() => removeTempDirectory(directory));

async function createFile(relativePath: string, ageSeconds = 0): Promise<void> {
  const path = join(directory, relativePath);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, relativePath);
  const time = new Date(Date.now() - ageSeconds * 1000);
  await utimes(path, time, time);
}

describe('Glob', () => {
  it('returns matches newest first', async () => {
    await createFile('src/old.ts', 300);
    await createFile('src/new.ts', 10);
    await createFile('src/deep/middle.ts', 100);
    await createFile('src/readme.md', 0);
    const context = createTestContext({ cwd: directory });
    const result = await createGlobTool().call({ pattern: '**/*.ts' }, context, testExtras);
    expect(result.content).toBe('src/new.ts\nsrc/deep/middle.ts\nsrc/old.ts');
    expect(result.data?.filenames[0]).toBe(join(directory, 'src', 'new.ts'));
  });

  it('skips node_modules and .git unless the pattern names them', async () => {
    await createFile('index.js');
    await createFile('node_modules/pkg/index.js');
    await createFile('.git/hooks/pre-commit.js');
    const context = createTestContext({ cwd: directory });
    const all = await createGlobTool().call({ pattern: '**/*.js' }, context, testExtras);
    expect(all.data?.filenames).toEqual([join(directory, 'index.js')]);
    const inModules = await createGlobTool().call(
      { pattern: 'node_modules/**/*.js' },
      context,
      testExtras,
    );
    expect(inModules.data?.filenames).toEqual([join(directory, 'node_modules', 'pkg', 'index.js')]);
  });

  it('caps results and says so', async () => {
    for (let index = 0; index < 7; index++) await createFile(`f${index}.txt`, index);
    const context = createTestContext({ cwd: directory });
    const result = await createGlobTool({ maxResults: 3 }).call(
      { pattern: '*.txt' },
      context,
      testExtras,
    );
    expect(result.data).toMatchObject({ numFiles: 7, truncated: true });
    expect(result.data?.filenames).toHaveLength(3);
    expect(result.content).toContain('Showing 3 of 7');
    expect(contentText(result).split('\n').slice(0, 3)).toEqual(['f0.txt', 'f1.txt', 'f2.txt']);
  });

  it('searches below path, with braces and classes, and only at the pattern depth', async () => {
    await createFile('pkg/a1.ts');
    await createFile('pkg/b2.tsx');
    await createFile('pkg/c3.js');
    await createFile('pkg/sub/d4.ts');
    const context = createTestContext({ cwd: directory });
    const result = await createGlobTool().call(
      { pattern: '[ab]*.{ts,tsx}', path: 'pkg' },
      context,
      testExtras,
    );
    expect([...(result.data?.filenames ?? [])].sort()).toEqual([
      join(directory, 'pkg/a1.ts'),
      join(directory, 'pkg/b2.tsx'),
    ]);
  });

  it('reports no matches, and refuses a path outside the roots or a missing directory', async () => {
    const context = createTestContext({ cwd: directory });
    expect(
      (await createGlobTool().call({ pattern: '*.none' }, context, testExtras)).content,
    ).toMatch(/No files match/);
    const escape = await createGlobTool()
      .call({ pattern: '*', path: '..' }, context, testExtras)
      .catch((error: unknown) => error);
    expect(DelegateError.hasCode(escape, 'PATH_ESCAPE')).toBe(true);
    const missing = await createGlobTool()
      .call({ pattern: '*', path: 'nope' }, context, testExtras)
      .catch((error: unknown) => error);
    expect(DelegateError.hasCode(missing, 'NOT_FOUND')).toBe(true);
  });

  it('says that path is a file, naming that file, before adding the pattern to it', async () => {
    await createFile('d/x.txt');
    const context = createTestContext({ cwd: directory });
    const error = await createGlobTool()
      .call({ pattern: 'd/x.txt', path: 'd/x.txt' }, context, testExtras)
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toBe(
      `${join(directory, 'd', 'x.txt')} is a file, not a directory; Glob searches directories.`,
    );
  });

  it('lists names with line terminators for ** alone, as for **/*', async () => {
    const names = ['plain.txt', 'a\nb.txt', 'a\rb.txt', 'a\u2028b.txt', 'a\u2029b.txt'];
    for (const name of names) await createFile(name);
    const context = createTestContext({ cwd: directory });
    for (const pattern of ['**', '**/*', '*']) {
      const result = await createGlobTool().call({ pattern }, context, testExtras);
      expect({ pattern, found: [...(result.data?.filenames ?? [])].sort() }).toEqual({
        pattern,
        found: names.map((name) => join(directory, name)).sort(),
      });
    }
  });

  it('does not follow symlinked directories out of the tree', async () => {
    const outside = await createTempDirectory();
    try {
      await writeFile(join(outside, 'secret.ts'), 'x');
      await symlink(outside, join(directory, 'linked'));
      const context = createTestContext({ cwd: directory });
      const result = await createGlobTool().call({ pattern: '**/*.ts' }, context, testExtras);
      expect(result.data?.filenames).toEqual([]);
    } finally {
      await removeTempDirectory(outside);
    }
  });
});

describe('Glob against hostile input', () => {
  it('stops a pattern that backtracks for ages on a long file name at the time limit', async () => {
    await createFile('a'.repeat(200));
    const error = await createGlobTool({ timeoutMs: 300 })
      .call(
        { pattern: '*a*a*a*a*a*a*a*a*a*a*b' },
        createTestContext({ cwd: directory }),
        testExtras,
      )
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'LIMIT_EXCEEDED')).toBe(true);
  });

  it('does not stop a search at once for timeoutMs Infinity or beyond the longest Node timer (which Node fires after 1 ms), and refuses a negative or NaN one', async () => {
    await createFile('src/kept.ts');
    for (const timeoutMs of [Number.POSITIVE_INFINITY, 2 ** 31]) {
      // Node runs a timer it cannot hold after 1 ms: every search used to stop at once.
      const result = await createGlobTool({ timeoutMs }).call(
        { pattern: '**/*.ts' },
        createTestContext({ cwd: directory }),
        testExtras,
      );
      expect(result.data?.filenames).toEqual([join(directory, 'src', 'kept.ts')]);
    }
    for (const timeoutMs of [-1, Number.NaN]) {
      expect(() => createGlobTool({ timeoutMs })).toThrow(
        /createGlobTool: options\.timeoutMs must be a number of milliseconds, 0 or more/,
      );
    }
  });

  it('refuses a pattern or path that leads outside the root', async () => {
    for (const input of [
      { pattern: '../*' },
      { pattern: '/etc/*' },
      { pattern: '*', path: '..' },
    ]) {
      const error = await createGlobTool()
        .call(input, createTestContext({ cwd: directory }), testExtras)
        .catch((caught: unknown) => caught);
      expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
    }
  });
});
