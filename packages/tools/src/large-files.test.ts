import { open, truncate, writeFile } from 'node:fs/promises';
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
import { MAX_EDITABLE_FILE_BYTES } from './file-freshness.js';
import { createReadTool } from './read-tool.js';
import { createWriteTool } from './write-tool.js';

let directory: string;
beforeEach(async () => {
  directory = await createTempDirectory();
});
afterEach(() => removeTempDirectory(directory));

const gibibyte = 1024 ** 3;

/** A sparse file of `size` bytes starting with a text line (no disk space, no time to write). */
async function sparseFile(name: string, size: number): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, 'first line\nsecond line\n');
  await truncate(path, size);
  return path;
}

describe('Write and Edit of very large files', () => {
  it('refuses a 3 GiB file that was never read without loading it (the host survives)', async () => {
    const path = await sparseFile('big.log', 3 * gibibyte);
    const context = createTestContext({ cwd: directory });
    const write = await rejection(
      createWriteTool().call({ file_path: 'big.log', content: 'hi' }, context, testExtras),
    );
    expect(write.code).toBe('FILE_STALE');
    expect(write.message).toContain(`${path} exists but has not been read`);
    const edit = await rejection(
      createEditTool().call(
        { file_path: 'big.log', old_string: 'first', new_string: 'FIRST' },
        context,
        testExtras,
      ),
    );
    expect(edit.code).toBe('FILE_STALE');
  });

  it('refuses to Edit a file over the limit after a partial read, naming the file, its size and the limit', async () => {
    const size = 3 * gibibyte;
    const path = join(directory, 'big.log');
    await writeFile(path, 'first line\nsecond line\n');
    const context = createTestContext({ cwd: directory });
    const read = await createReadTool().call(
      { file_path: 'big.log', offset: 1, limit: 1 },
      context,
      testExtras,
    );
    expect(read.content).toContain('first line');
    // A log that grew to 3 GiB after the model read its first line.
    await truncate(path, size);
    const error = await rejection(
      createEditTool().call(
        { file_path: 'big.log', old_string: 'first', new_string: 'FIRST' },
        context,
        testExtras,
      ),
    );
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toContain(path);
    expect(error.message).toContain(String(size));
    expect(error.message).toContain(String(MAX_EDITABLE_FILE_BYTES));
    // Write still refuses a partly read file, before looking at its size.
    const write = await rejection(
      createWriteTool().call({ file_path: 'big.log', content: 'hi' }, context, testExtras),
    );
    expect(write.code).toBe('FILE_STALE');
    expect(write.message).toContain('only part of');
  }, 60_000);

  it('still sees that a file read in full changed when it has grown past the limit', async () => {
    const path = join(directory, 'notes.txt');
    await writeFile(path, 'short\n');
    const context = createTestContext({ cwd: directory });
    await createReadTool().call({ file_path: 'notes.txt' }, context, testExtras);
    await truncate(path, MAX_EDITABLE_FILE_BYTES + 1024);
    const write = await rejection(
      createWriteTool().call({ file_path: 'notes.txt', content: 'new\n' }, context, testExtras),
    );
    expect(write.code).toBe('FILE_STALE');
    expect(write.message).toContain('changed on disk');
    // Shrunk back to what was read: unchanged, so Write goes ahead.
    await truncate(path, 6);
    await createWriteTool().call({ file_path: 'notes.txt', content: 'new\n' }, context, testExtras);
  }, 60_000);

  it('says a valid UTF-8 file too long for one string is too large, not binary', async () => {
    const path = join(directory, 'huge.txt');
    // One character more than the longest JavaScript string.
    const size = 0x1fffffe8 + 1;
    const handle = await open(path, 'w');
    const chunk = Buffer.alloc(64 * 1024 * 1024, 'a');
    for (let written = 0; written < size; written += chunk.length) {
      await handle.write(chunk, 0, Math.min(chunk.length, size - written));
    }
    await handle.close();
    const error = await rejection(
      createReadTool({ maxBytes: size + 1 }).call(
        { file_path: 'huge.txt' },
        createTestContext({ cwd: directory }),
        testExtras,
      ),
    );
    expect(error.code).toBe('LIMIT_EXCEEDED');
    expect(error.message).toContain(`${path} is too large`);
    expect(error.message).not.toContain('binary');
  }, 120_000);
});
