import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTempDirectory,
  createTestContext,
  removeTempDirectory,
  testExtras,
} from './__fixtures__/test-context.js';
import { rejection } from './__fixtures__/expect-delegate-error.js';
import { createReadTool } from './read-tool.js';
import { hashContent } from './text-file.js';

let directory: string;
beforeEach(async () => {
  directory = await createTempDirectory();
});
afterEach(() => removeTempDirectory(directory));

describe('Read', () => {
  it('shows numbered lines and records content, hash and mtime in the cache', async () => {
    const path = join(directory, 'notes.txt');
    await writeFile(path, 'alpha\nbeta\ngamma\n');
    const context = createTestContext({ cwd: directory });
    const result = await createReadTool().call({ file_path: 'notes.txt' }, context, testExtras);
    expect(result.content).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
    const state = context.readFileState.get(path);
    expect(state?.content).toBe('alpha\nbeta\ngamma\n');
    expect(state?.contentHash).toBe(hashContent('alpha\nbeta\ngamma\n'));
    expect(state?.timestamp).toBeGreaterThan(0);
    expect(state?.isPartialView).toBeUndefined();
  });

  it('reads a 1-based line range and says what is left', async () => {
    await writeFile(
      join(directory, 'lines.txt'),
      Array.from({ length: 10 }, (_, index) => `line ${index + 1}`).join('\n'),
    );
    const context = createTestContext({ cwd: directory });
    const result = await createReadTool().call(
      { file_path: 'lines.txt', offset: 4, limit: 2 },
      context,
      testExtras,
    );
    expect(result.content).toContain('     4\tline 4\n     5\tline 5');
    expect(result.content).not.toContain('line 6');
    expect(result.content).toContain('Showing lines 4-5 of 10');
    const state = context.readFileState.get(join(directory, 'lines.txt'));
    expect(state).toMatchObject({
      content: 'line 4\nline 5',
      offset: 4,
      limit: 2,
      isPartialView: true,
    });
  });

  it('cuts long lines', async () => {
    await writeFile(join(directory, 'wide.txt'), 'x'.repeat(50));
    const context = createTestContext({ cwd: directory });
    const result = await createReadTool({ maxLineLength: 10 }).call(
      { file_path: 'wide.txt' },
      context,
      testExtras,
    );
    expect(result.content).toContain(`${'x'.repeat(10)}… [line truncated, 40 more characters]`);
  });

  it('refuses a file over the byte cap unless a range is given, and then streams the range', async () => {
    const big = Array.from({ length: 2000 }, (_, index) => `row ${index + 1}`).join('\n');
    await writeFile(join(directory, 'big.txt'), big);
    const context = createTestContext({ cwd: directory });
    const tool = createReadTool({ maxBytes: 1000 });
    const error = await rejection(tool.call({ file_path: 'big.txt' }, context, testExtras));
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toMatch(/offset and limit/);
    const result = await tool.call(
      { file_path: 'big.txt', offset: 1500, limit: 2 },
      context,
      testExtras,
    );
    expect(result.content).toContain('  1500\trow 1500\n  1501\trow 1501');
    expect(result.data?.totalLines).toBe(2000);
    expect(context.readFileState.get(join(directory, 'big.txt'))?.contentHash).toBe(
      hashContent(big),
    );
  });

  it('reads the first line of a 64 MiB one-line file, keeping only what it shows', async () => {
    const size = 64 * 1024 * 1024;
    await writeFile(join(directory, 'bundle.min.js'), `${'a'.repeat(size)}\nsecond line\n`);
    const context = createTestContext({ cwd: directory });
    const result = await createReadTool().call(
      { file_path: 'bundle.min.js', offset: 1, limit: 1 },
      context,
      testExtras,
    );
    expect(result.content).toBe(
      `     1\t${'a'.repeat(2000)}… [line truncated, ${size - 2000} more characters]\n\n` +
        '(Showing lines 1-1 of 2. Use offset and limit to read more.)',
    );
    // The cache holds what the model was shown, not the whole line.
    expect(context.readFileState.get(join(directory, 'bundle.min.js'))).toMatchObject({
      content: 'a'.repeat(2000),
      isPartialView: true,
    });
  });

  it('stops streaming a range when the call is aborted', async () => {
    await writeFile(join(directory, 'bundle.min.js'), 'a'.repeat(64 * 1024 * 1024));
    const tool = createReadTool();
    const input = { file_path: 'bundle.min.js', offset: 1, limit: 1 };
    const before = new AbortController();
    before.abort();
    const early = createTestContext({ cwd: directory, abortController: before });
    expect((await rejection(tool.call(input, early, testExtras))).code).toBe('ABORTED');
    const during = new AbortController();
    const context = createTestContext({ cwd: directory, abortController: during });
    const reading = tool.call(input, context, testExtras);
    setTimeout(() => during.abort(), 0);
    expect((await rejection(reading)).code).toBe('ABORTED');
    expect(context.readFileState.size).toBe(0);
  });

  it('refuses binary files (NUL bytes or invalid UTF-8)', async () => {
    await writeFile(join(directory, 'image.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    await writeFile(join(directory, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const context = createTestContext({ cwd: directory });
    const tool = createReadTool();
    expect(
      (await rejection(tool.call({ file_path: 'image.bin' }, context, testExtras))).message,
    ).toMatch(/binary/);
    expect(
      (await rejection(tool.call({ file_path: 'latin1.txt' }, context, testExtras))).message,
    ).toMatch(/UTF-8/);
    expect(context.readFileState.size).toBe(0);
  });

  it('refuses a directory with a clear message', async () => {
    await mkdir(join(directory, 'src'));
    const context = createTestContext({ cwd: directory });
    const error = await rejection(createReadTool().call({ file_path: 'src' }, context, testExtras));
    expect(error.message).toMatch(/is a directory/);
  });

  it('suggests similar names for a missing file', async () => {
    await writeFile(join(directory, 'config.json'), '{}');
    const context = createTestContext({ cwd: directory });
    const error = await rejection(
      createReadTool().call({ file_path: 'config.yaml' }, context, testExtras),
    );
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain(`Did you mean: ${join(directory, 'config.json')}`);
    const typo = await rejection(
      createReadTool().call({ file_path: 'confg.json' }, context, testExtras),
    );
    expect(typo.message).toContain('config.json');
  });

  it('says so for an empty file and for an offset past the end', async () => {
    await writeFile(join(directory, 'empty.txt'), '');
    await writeFile(join(directory, 'short.txt'), 'one\ntwo\n');
    const context = createTestContext({ cwd: directory });
    expect(
      (await createReadTool().call({ file_path: 'empty.txt' }, context, testExtras)).content,
    ).toMatch(/is empty/);
    const past = await createReadTool().call(
      { file_path: 'short.txt', offset: 9 },
      context,
      testExtras,
    );
    expect(past.content).toMatch(/has 2 lines; offset 9 is past the end/);
  });

  it('refuses paths outside the allowed roots, through .. or a symlink', async () => {
    const outside = await createTempDirectory();
    try {
      await writeFile(join(outside, 'secret.txt'), 'secret');
      await symlink(join(outside, 'secret.txt'), join(directory, 'link.txt'));
      const context = createTestContext({ cwd: directory });
      const tool = createReadTool();
      expect(
        (
          await rejection(
            tool.call({ file_path: join(outside, 'secret.txt') }, context, testExtras),
          )
        ).code,
      ).toBe('PATH_ESCAPE');
      expect(
        (await rejection(tool.call({ file_path: 'link.txt' }, context, testExtras))).code,
      ).toBe('PATH_ESCAPE');
      const allowed = createTestContext({
        cwd: directory,
        additionalWorkingDirectories: [outside],
      });
      expect((await tool.call({ file_path: 'link.txt' }, allowed, testExtras)).content).toContain(
        'secret',
      );
    } finally {
      await removeTempDirectory(outside);
    }
  });

  it('follows the context file-reading limits', async () => {
    await writeFile(join(directory, 'a.txt'), 'abcdefghij'.repeat(20));
    const context = {
      ...createTestContext({ cwd: directory }),
      fileReadingLimits: { maxBytes: 50 },
    };
    expect(
      (await rejection(createReadTool().call({ file_path: 'a.txt' }, context, testExtras))).code,
    ).toBe('LIMIT_EXCEEDED');
  });
});

describe('Read of special files', () => {
  it('refuses a FIFO instead of blocking forever on it', async () => {
    execFileSync('mkfifo', [join(directory, 'pipe')]);
    const context = createTestContext({ cwd: directory });
    const error = await rejection(
      createReadTool().call({ file_path: 'pipe' }, context, testExtras),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(/not a regular file/);
  });
});
