import { execFileSync } from 'node:child_process';
import { chmod, mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
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
import { createGrepTool } from './grep-tool.js';

let directory: string;
beforeEach(async () => {
  directory = await createTempDirectory();
});
afterEach(() => removeTempDirectory(directory));

async function createFile(
  relativePath: string,
  content: string | Buffer,
  ageSeconds = 0,
): Promise<void> {
  const path = join(directory, relativePath);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
  const time = new Date(Date.now() - ageSeconds * 1000);
  await utimes(path, time, time);
}

function grep(input: Parameters<ReturnType<typeof createGrepTool>['call']>[0]) {
  return createGrepTool().call(input, createTestContext({ cwd: directory }), testExtras);
}

describe('Grep', () => {
  it('lists matching files newest first by default', async () => {
    await createFile('a.ts', 'const needle = 1;\n', 100);
    await createFile('b.ts', 'no match here\n', 0);
    await createFile('sub/c.ts', 'the needle again\n', 10);
    const result = await grep({ pattern: 'needle' });
    expect(result.content).toBe('Found 2 files\nsub/c.ts\na.ts');
  });

  it('respects .gitignore, nested ones and negations, and skips .git and binary files', async () => {
    await createFile('.gitignore', 'build/\n*.log\n');
    await createFile('kept.ts', 'needle');
    await createFile('build/out.js', 'needle');
    await createFile('debug.log', 'needle');
    await createFile('pkg/.gitignore', 'generated.ts\n!important.log\n');
    await createFile('pkg/generated.ts', 'needle');
    await createFile('pkg/important.log', 'needle');
    await createFile('pkg/src.ts', 'needle');
    await createFile('.git/config', 'needle');
    await createFile('image.png', Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2])]));
    const result = await grep({ pattern: 'needle' });
    expect([...(result.data?.filenames ?? [])].sort()).toEqual(
      ['kept.ts', 'pkg/important.log', 'pkg/src.ts'].map((name) => join(directory, name)),
    );
  });

  it('shows matching lines with numbers and context in content mode', async () => {
    await createFile(
      'f.txt',
      ['one', 'two', 'match A', 'four', 'five', 'six', 'seven', 'match B', 'nine'].join('\n'),
    );
    const plain = await grep({ pattern: 'match', output_mode: 'content' });
    expect(plain.content).toBe('f.txt:3:match A\nf.txt:8:match B');
    const withContext = await grep({ pattern: 'match', output_mode: 'content', '-C': 1 });
    expect(withContext.content).toBe(
      [
        'f.txt-2-two',
        'f.txt:3:match A',
        'f.txt-4-four',
        '--',
        'f.txt-7-seven',
        'f.txt:8:match B',
        'f.txt-9-nine',
      ].join('\n'),
    );
    const after = await grep({ pattern: 'match A', output_mode: 'content', '-A': 2, '-n': false });
    expect(after.content).toBe('f.txt:match A\nf.txt-four\nf.txt-five');
  });

  it('counts matching lines per file', async () => {
    await createFile('a.txt', 'x\nx\ny\nx\n');
    await createFile('b.txt', 'x\n');
    const result = await grep({ pattern: '^x$', output_mode: 'count' });
    expect(result.content).toContain('a.txt:3\nb.txt:1');
    expect(result.data).toMatchObject({ numFiles: 2, numMatches: 4 });
  });

  it('searches case-insensitively with -i and filters files by glob', async () => {
    await createFile('src/a.ts', 'Hello World');
    await createFile('src/b.js', 'hello world');
    await createFile('src/deep/c.ts', 'HELLO');
    const caseSensitive = await grep({ pattern: 'hello' });
    expect(caseSensitive.data?.filenames).toEqual([join(directory, 'src/b.js')]);
    const insensitive = await grep({ pattern: 'hello', '-i': true, glob: '*.ts' });
    expect([...(insensitive.data?.filenames ?? [])].sort()).toEqual([
      join(directory, 'src/a.ts'),
      join(directory, 'src/deep/c.ts'),
    ]);
  });

  it('runs JS regular expressions, with a literal prefilter that never hides matches', async () => {
    await createFile('a.ts', 'export function alpha() {}\n');
    await createFile('b.ts', 'export const beta = () => {}\n');
    await createFile('c.ts', 'function  gamma () {}\n');
    const result = await grep({ pattern: 'function\\s+\\w+\\s*\\(', output_mode: 'content' });
    expect(result.content).toBe('a.ts:1:export function alpha() {}\nc.ts:1:function  gamma () {}');
  });

  it('does not report a match that only exists across a line break', async () => {
    await createFile('a.txt', 'foo\nbar\n');
    const result = await grep({ pattern: 'foo\\sbar' });
    expect(result.data?.numFiles).toBe(0);
    expect(result.content).toBe('No files found.');
  });

  it('caps output with head_limit and says so', async () => {
    for (let index = 0; index < 5; index++) await createFile(`f${index}.txt`, 'hit\nhit\n', index);
    const files = await grep({ pattern: 'hit', head_limit: 2 });
    expect(files.data).toMatchObject({ numFiles: 5, truncated: true });
    expect(files.content).toContain('Showing the 2 newest');
    const lines = await grep({ pattern: 'hit', output_mode: 'content', head_limit: 3 });
    expect(
      contentText(lines)
        .split('\n')
        .filter((line) => line.includes(':hit')),
    ).toHaveLength(3);
    expect(lines.content).toContain('Output cut at 3 lines');
  });

  it('searches a single file given as path', async () => {
    await createFile('one.txt', 'alpha\nbeta\n');
    await createFile('two.txt', 'alpha\n');
    const result = await grep({ pattern: 'alpha', path: 'one.txt', output_mode: 'content' });
    expect(result.content).toBe('one.txt:1:alpha');
  });

  it('refuses an invalid regex and a path outside the roots', async () => {
    const invalid = await grep({ pattern: 'foo(' }).catch((error: unknown) => error);
    expect(DelegateError.hasCode(invalid, 'INVALID_ARGUMENT')).toBe(true);
    expect((invalid as Error).message).toMatch(/not a valid regular expression/);
    const escape = await grep({ pattern: 'x', path: '/' }).catch((error: unknown) => error);
    expect(DelegateError.hasCode(escape, 'PATH_ESCAPE')).toBe(true);
  });
});

describe('Grep against hostile input', () => {
  it('stops a catastrophically backtracking pattern at the time limit instead of hanging', async () => {
    await createFile('evil.txt', `${'a'.repeat(40)}!\n`);
    const error = await createGrepTool({ timeoutMs: 300 })
      .call(
        { pattern: '(a+)+$', output_mode: 'content' },
        createTestContext({ cwd: directory }),
        testExtras,
      )
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'LIMIT_EXCEEDED')).toBe(true);
    expect((error as DelegateError).message).toMatch(/backtrack/);
  });

  it('takes timeoutMs Infinity as no limit, and refuses a negative one', async () => {
    await createFile('found.txt', 'needle\n');
    // Node runs a timer it cannot hold after 1 ms: every search used to stop at once.
    const result = await createGrepTool({ timeoutMs: Number.POSITIVE_INFINITY }).call(
      { pattern: 'needle' },
      createTestContext({ cwd: directory }),
      testExtras,
    );
    expect(result.data?.filenames).toEqual([join(directory, 'found.txt')]);
    expect(() => createGrepTool({ timeoutMs: -1 })).toThrow(
      /createGrepTool: options\.timeoutMs must be a number of milliseconds, 0 or more/,
    );
  });

  it('stops a backtracking search when the agent is aborted', async () => {
    await createFile('evil.txt', `${'a'.repeat(40)}!\n`);
    const abortController = new AbortController();
    const pending = createGrepTool()
      .call(
        { pattern: '(a+)+$' },
        createTestContext({ cwd: directory, abortController }),
        testExtras,
      )
      .catch((caught: unknown) => caught);
    setTimeout(() => abortController.abort(), 100);
    expect(DelegateError.hasCode(await pending, 'ABORTED')).toBe(true);
  });

  it('does not hang on a FIFO given as path (it says so), nor list it in a tree', async () => {
    await createFile('real.txt', 'needle\n');
    execFileSync('mkfifo', [join(directory, 'pipe')]);
    const error = await grep({ pattern: 'needle', path: 'pipe' }).catch(
      (caught: unknown) => caught,
    );
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toContain(`${join(directory, 'pipe')} is not a regular file`);
    expect(contentText(await grep({ pattern: 'needle' }))).toBe('Found 1 file\nreal.txt');
  });

  it('says why it cannot search a file it was given, instead of finding nothing', async () => {
    await createFile('big.log', Buffer.alloc(2048, 'needle\n'));
    const large = await createGrepTool({ maxFileBytes: 1024 })
      .call(
        { pattern: 'needle', path: 'big.log' },
        createTestContext({ cwd: directory }),
        testExtras,
      )
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(large, 'LIMIT_EXCEEDED')).toBe(true);
    expect((large as Error).message).toContain(`${join(directory, 'big.log')} is 2048 bytes`);
  });

  // Root reads any file whatever its mode.
  it.runIf(process.getuid?.() !== 0)(
    'names a file it may not read instead of saying no files were found',
    async () => {
      await createFile('secret.txt', 'needle\n');
      await chmod(join(directory, 'secret.txt'), 0o000);
      const error = await grep({ pattern: 'needle', path: 'secret.txt' }).catch(
        (caught: unknown) => caught,
      );
      expect(DelegateError.hasCode(error, 'FILE_SYSTEM_ERROR')).toBe(true);
      expect((error as Error).message).toContain(join(directory, 'secret.txt'));
    },
  );

  it('does not list files behind a symlinked directory that points outside the root', async () => {
    const outside = await createTempDirectory();
    try {
      await writeFile(join(outside, 'secret.txt'), 'needle\n');
      await symlink(outside, join(directory, 'escape'));
      await createFile('inside.txt', 'needle\n');
      const result = await grep({ pattern: 'needle', glob: '**/*.txt' });
      expect(contentText(result)).toBe('Found 1 file\ninside.txt');
      const error = await grep({ pattern: 'needle', path: 'escape' }).catch(
        (caught: unknown) => caught,
      );
      expect(DelegateError.hasCode(error, 'PATH_ESCAPE')).toBe(true);
    } finally {
      await removeTempDirectory(outside);
    }
  });
});
