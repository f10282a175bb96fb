import type { FileHandle } from 'node:fs/promises';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTempDirectory, removeTempDirectory } from './__fixtures__/test-context.js';
import { rejection } from './__fixtures__/expect-delegate-error.js';
import { readLineRange } from './read-line-range.js';
import { hashContent } from './text-file.js';

let directory: string;
beforeEach(async () => {
  directory = await createTempDirectory();
});
afterEach(() => removeTempDirectory(directory));

/** A stand-in for an open file whose stream gives `first` and then waits forever. */
function stalledHandle(first: Buffer): { handle: FileHandle; wasDestroyed: () => boolean } {
  let stream: Readable | undefined;
  const handle = {
    createReadStream: () => {
      stream = new Readable({ read() {} });
      stream.push(first);
      return stream;
    },
  } as unknown as FileHandle;
  return { handle, wasDestroyed: () => stream?.destroyed === true };
}

describe('readLineRange', () => {
  it('keeps only the start of a huge line, and still counts and hashes the whole file', async () => {
    const path = join(directory, 'bundle.min.js');
    const longLine = 'a'.repeat(8 * 1024 * 1024);
    await writeFile(path, `${longLine}\nsecond\r\n`);
    const range = await readLineRange({ path, offset: 1, limit: 2, maxLineLength: 5 });
    expect(range).toEqual({
      lines: ['aaaaa', 'secon'],
      lineLengths: [longLine.length, 6],
      totalLines: 2,
      contentHash: hashContent(`${longLine}\nsecond\r\n`),
    });
  });

  it('rejects with ABORTED as soon as the signal aborts, also while a read is pending', async () => {
    const { handle, wasDestroyed } = stalledHandle(Buffer.from('first line\nsecond'));
    const controller = new AbortController();
    const reading = readLineRange({
      path: 'stalled.txt',
      handle,
      offset: 1,
      limit: 1,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 20);
    const error = await rejection(reading);
    expect(error.code).toBe('ABORTED');
    expect(wasDestroyed()).toBe(true);
  });

  it('refuses a file that ends inside a UTF-8 character', async () => {
    const path = join(directory, 'cut.txt');
    await writeFile(path, Buffer.from([0x61, 0x0a, 0xc3]));
    const error = await rejection(readLineRange({ path, offset: 1, limit: 1 }));
    expect(error.message).toMatch(/UTF-8/);
  });
});
