import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
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

let directory: string;
beforeEach(async () => {
  directory = await createTempDirectory();
});
afterEach(() => removeTempDirectory(directory));

async function readFirst(name: string, content: string) {
  await writeFile(join(directory, name), content);
  const context = createTestContext({ cwd: directory });
  await createReadTool().call({ file_path: name }, context, testExtras);
  return context;
}

describe('Edit', () => {
  it('replaces a unique match, updates the cache and returns a snippet', async () => {
    const context = await readFirst('code.ts', 'const a = 1;\nconst b = 2;\nconst c = 3;\n');
    const result = await createEditTool().call(
      { file_path: 'code.ts', old_string: 'const b = 2;', new_string: 'const b = 20;' },
      context,
      testExtras,
    );
    const updated = 'const a = 1;\nconst b = 20;\nconst c = 3;\n';
    expect(await readFile(join(directory, 'code.ts'), 'utf8')).toBe(updated);
    expect(result.content).toContain('     2\tconst b = 20;');
    expect(context.readFileState.get(join(directory, 'code.ts'))?.contentHash).toBe(
      hashContent(updated),
    );
    // A second edit needs no new read: the cache follows the tool's own writes.
    await createEditTool().call(
      { file_path: 'code.ts', old_string: 'c = 3', new_string: 'c = 30' },
      context,
      testExtras,
    );
    expect(await readFile(join(directory, 'code.ts'), 'utf8')).toContain('c = 30');
  });

  it('fails when old_string is not found', async () => {
    const context = await readFirst('a.txt', 'hello');
    const error = await rejection(
      createEditTool().call(
        { file_path: 'a.txt', old_string: 'bye', new_string: 'x' },
        context,
        testExtras,
      ),
    );
    expect(error.code).toBe('TOOL_FAILED');
    expect(error.message).toMatch(/not found/);
  });

  it('refuses several matches without replace_all and says how many', async () => {
    const context = await readFirst('a.txt', 'foo bar foo baz foo');
    const error = await rejection(
      createEditTool().call(
        { file_path: 'a.txt', old_string: 'foo', new_string: 'qux' },
        context,
        testExtras,
      ),
    );
    expect(error.message).toMatch(/occurs 3 times/);
    expect(await readFile(join(directory, 'a.txt'), 'utf8')).toBe('foo bar foo baz foo');
    const result = await createEditTool().call(
      { file_path: 'a.txt', old_string: 'foo', new_string: 'qux', replace_all: true },
      context,
      testExtras,
    );
    expect(await readFile(join(directory, 'a.txt'), 'utf8')).toBe('qux bar qux baz qux');
    expect(result.data?.replacements).toBe(3);
  });

  it('refuses identical old and new strings', async () => {
    const context = await readFirst('a.txt', 'same');
    const error = await rejection(
      createEditTool().call(
        { file_path: 'a.txt', old_string: 'same', new_string: 'same' },
        context,
        testExtras,
      ),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
  });

  it('refuses a file that was not read, or changed since it was read', async () => {
    await writeFile(join(directory, 'unread.txt'), 'text');
    const fresh = createTestContext({ cwd: directory });
    const unread = await rejection(
      createEditTool().call(
        { file_path: 'unread.txt', old_string: 'text', new_string: 'new' },
        fresh,
        testExtras,
      ),
    );
    expect(unread.code).toBe('FILE_STALE');

    const context = await readFirst('b.txt', 'one two');
    await writeFile(join(directory, 'b.txt'), 'one two three');
    const stale = await rejection(
      createEditTool().call(
        { file_path: 'b.txt', old_string: 'two', new_string: '2' },
        context,
        testExtras,
      ),
    );
    expect(stale.code).toBe('FILE_STALE');
    expect(stale.message).toMatch(/Read it again/);
    expect(await readFile(join(directory, 'b.txt'), 'utf8')).toBe('one two three');
  });

  it('matches multi-line text in a CRLF file and keeps CRLF', async () => {
    const context = await readFirst('win.txt', 'first\r\nsecond\r\nthird\r\n');
    await createEditTool().call(
      { file_path: 'win.txt', old_string: 'first\nsecond', new_string: 'one\ntwo' },
      context,
      testExtras,
    );
    expect(await readFile(join(directory, 'win.txt'), 'utf8')).toBe('one\r\ntwo\r\nthird\r\n');
  });

  it('keeps CRLF when new_string adds lines to a single-line match, and shows clean lines', async () => {
    const context = await readFirst('crlf.txt', 'one\r\ntwo\r\nthree\r\n');
    const result = await createEditTool().call(
      { file_path: 'crlf.txt', old_string: 'two', new_string: 'two\nTWO' },
      context,
      testExtras,
    );
    expect(await readFile(join(directory, 'crlf.txt'), 'utf8')).toBe(
      'one\r\ntwo\r\nTWO\r\nthree\r\n',
    );
    expect(result.content).toContain('     3\tTWO\n     4\tthree');
    expect(result.content).not.toContain('\r');
    expect(result.content).not.toContain('     5\t');
    // A file with LF endings keeps LF.
    const lf = await readFirst('lf.txt', 'one\ntwo\n');
    await createEditTool().call(
      { file_path: 'lf.txt', old_string: 'two', new_string: 'two\nTWO' },
      lf,
      testExtras,
    );
    expect(await readFile(join(directory, 'lf.txt'), 'utf8')).toBe('one\ntwo\nTWO\n');
  });

  it('keeps a byte-order mark and allows a second edit without a new read', async () => {
    const context = await readFirst('bom.txt', '\ufeffhello world');
    await createEditTool().call(
      { file_path: 'bom.txt', old_string: 'hello', new_string: 'goodbye' },
      context,
      testExtras,
    );
    expect(await readFile(join(directory, 'bom.txt'), 'utf8')).toBe('\ufeffgoodbye world');
    await createEditTool().call(
      { file_path: 'bom.txt', old_string: 'world', new_string: 'moon' },
      context,
      testExtras,
    );
    expect(await readFile(join(directory, 'bom.txt'), 'utf8')).toBe('\ufeffgoodbye moon');
  });

  it('keeps $ patterns in new_string literal', async () => {
    const context = await readFirst('a.txt', 'price');
    await createEditTool().call(
      { file_path: 'a.txt', old_string: 'price', new_string: "$& $1 $'" },
      context,
      testExtras,
    );
    expect(await readFile(join(directory, 'a.txt'), 'utf8')).toBe("$& $1 $'");
  });
});

describe('Edit of special files', () => {
  it('refuses a FIFO instead of blocking forever on it', async () => {
    execFileSync('mkfifo', [join(directory, 'pipe')]);
    const context = createTestContext({ cwd: directory });
    const error = await createEditTool()
      .call({ file_path: 'pipe', old_string: 'a', new_string: 'b' }, context, testExtras)
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
  });
});
