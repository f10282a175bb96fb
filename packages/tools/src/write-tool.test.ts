import { existsSync } from 'node:fs';
import { readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createTempDirectory,
  createTestContext,
  removeTempDirectory,
  testExtras,
} from './__fixtures__/test-context.js';
import { rejection } from './__fixtures__/expect-delegate-error.js';
import { createEditTool } from './edit-tool.js';
import { createReadTool } from './read-tool.js';
import { hashContent } from './text-file.js';
import { createWriteTool } from './write-tool.js';

let directory: string;
beforeEach(async () => {
  directory = await createTempDirectory();
});
afterEach(() => removeTempDirectory(directory));

describe('Write', () => {
  it('creates a new file and its parent directories without a prior read, and caches it', async () => {
    const context = createTestContext({ cwd: directory });
    const result = await createWriteTool().call(
      { file_path: 'deep/er/new.txt', content: 'hello\n' },
      context,
      testExtras,
    );
    const path = join(directory, 'deep', 'er', 'new.txt');
    expect(await readFile(path, 'utf8')).toBe('hello\n');
    expect(result.content).toContain('Created');
    expect(context.readFileState.get(path)?.contentHash).toBe(hashContent('hello\n'));
  });

  it('refuses a path ending in / instead of creating a file of that name', async () => {
    const context = createTestContext({ cwd: directory });
    const error = await rejection(
      createWriteTool().call({ file_path: 'new/', content: 'x' }, context, testExtras),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain(`${join(directory, 'new')}/ ends with /`);
    expect(existsSync(join(directory, 'new'))).toBe(false);
  });

  it('refuses to overwrite a file that was never read', async () => {
    await writeFile(join(directory, 'existing.txt'), 'keep me');
    const context = createTestContext({ cwd: directory });
    const error = await rejection(
      createWriteTool().call({ file_path: 'existing.txt', content: 'oops' }, context, testExtras),
    );
    expect(error.code).toBe('FILE_STALE');
    expect(error.message).toMatch(/Read it first/);
    expect(await readFile(join(directory, 'existing.txt'), 'utf8')).toBe('keep me');
  });

  it('overwrites a file after it was read, and again after its own write', async () => {
    await writeFile(join(directory, 'existing.txt'), 'v1');
    const context = createTestContext({ cwd: directory });
    await createReadTool().call({ file_path: 'existing.txt' }, context, testExtras);
    await createWriteTool().call({ file_path: 'existing.txt', content: 'v2' }, context, testExtras);
    await createWriteTool().call({ file_path: 'existing.txt', content: 'v3' }, context, testExtras);
    expect(await readFile(join(directory, 'existing.txt'), 'utf8')).toBe('v3');
  });

  it('refuses when the file changed on disk after it was read, even with the old mtime restored', async () => {
    const path = join(directory, 'shared.txt');
    await writeFile(path, 'original');
    const context = createTestContext({ cwd: directory });
    await createReadTool().call({ file_path: 'shared.txt' }, context, testExtras);
    const mtime = context.readFileState.get(path)?.timestamp ?? 0;
    await writeFile(path, 'changed by someone else');
    await utimes(path, new Date(mtime), new Date(mtime));
    const error = await rejection(
      createWriteTool().call({ file_path: 'shared.txt', content: 'mine' }, context, testExtras),
    );
    expect(error.code).toBe('FILE_STALE');
    expect(error.message).toMatch(/changed on disk since it was last read/);
    expect(await readFile(path, 'utf8')).toBe('changed by someone else');
  });

  it('accepts a file whose mtime moved but whose content is unchanged', async () => {
    const path = join(directory, 'touched.txt');
    await writeFile(path, 'same');
    const context = createTestContext({ cwd: directory });
    await createReadTool().call({ file_path: 'touched.txt' }, context, testExtras);
    await utimes(path, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
    await createWriteTool().call({ file_path: 'touched.txt', content: 'new' }, context, testExtras);
    expect(await readFile(path, 'utf8')).toBe('new');
  });

  it('refuses to write outside the allowed roots', async () => {
    const context = createTestContext({ cwd: join(directory) });
    const error = await rejection(
      createWriteTool().call({ file_path: '../escaped.txt', content: 'x' }, context, testExtras),
    );
    expect(error.code).toBe('PATH_ESCAPE');
  });
});

describe('Write after a partial read', () => {
  const lines = Array.from({ length: 50 }, (_, index) => `line ${index + 1}`).join('\n');

  it('refuses to overwrite a file of which only a range was read', async () => {
    await writeFile(join(directory, 'long.txt'), lines);
    const context = createTestContext({ cwd: directory });
    await createReadTool().call(
      { file_path: 'long.txt', offset: 1, limit: 10 },
      context,
      testExtras,
    );
    const error = await rejection(
      createWriteTool().call({ file_path: 'long.txt', content: 'short' }, context, testExtras),
    );
    expect(error.code).toBe('FILE_STALE');
    expect(error.message).toMatch(/only part of/);
    expect(await readFile(join(directory, 'long.txt'), 'utf8')).toBe(lines);
  });

  it('still refuses after an Edit of the partly read file, and allows Write after a full read', async () => {
    await writeFile(join(directory, 'long.txt'), lines);
    const context = createTestContext({ cwd: directory });
    await createReadTool().call(
      { file_path: 'long.txt', offset: 1, limit: 10 },
      context,
      testExtras,
    );
    await createEditTool().call(
      { file_path: 'long.txt', old_string: 'line 3\n', new_string: 'line three\n' },
      context,
      testExtras,
    );
    const error = await rejection(
      createWriteTool().call({ file_path: 'long.txt', content: 'short' }, context, testExtras),
    );
    expect(error.code).toBe('FILE_STALE');
    await createReadTool().call({ file_path: 'long.txt' }, context, testExtras);
    await createWriteTool().call({ file_path: 'long.txt', content: 'short' }, context, testExtras);
    expect(await readFile(join(directory, 'long.txt'), 'utf8')).toBe('short');
  });
});

describe('Write with odd paths', () => {
  it('refuses ~/ instead of creating a directory named ~ in the working directory', async () => {
    const context = createTestContext({ cwd: directory });
    const error = await rejection(
      createWriteTool().call({ file_path: '~/.bashrc', content: 'x' }, context, testExtras),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(await readdir(directory)).toEqual([]);
  });
});
