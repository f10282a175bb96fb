import { type FileHandle, open } from 'node:fs/promises';

const CHUNK = 64 * 1024;

/** Offset just past the last newline of the file's first `end` bytes (0 when there is none). */
async function lineStartBefore(handle: FileHandle, end: number): Promise<number> {
  const chunk = Buffer.alloc(CHUNK);
  let position = end;
  while (position > 0) {
    const start = Math.max(0, position - CHUNK);
    const { bytesRead } = await handle.read(chunk, 0, position - start, start);
    const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (newline !== -1) return start + newline + 1;
    position = start;
  }
  return 0;
}

function isCompleteJson(bytes: Buffer): boolean {
  try {
    JSON.parse(bytes.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes a JSONL file end on a line boundary before more lines are appended. When the file
 * does not end in a newline (a crash stopped a write halfway), a last line that is not
 * valid JSON is cut off, and one that is complete (the crash came just before its newline)
 * gets its newline. Returns the number of bytes cut (0 when nothing was cut, also for a
 * missing or empty file).
 */
export async function cutTornTail(path: string): Promise<number> {
  let handle;
  try {
    handle = await open(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size === 0) return 0;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    if (last[0] === 0x0a) return 0;
    const start = await lineStartBefore(handle, size);
    const tail = Buffer.alloc(size - start);
    await handle.read(tail, 0, tail.length, start);
    if (isCompleteJson(tail)) {
      await handle.write('\n', size);
      return 0;
    }
    await handle.truncate(start);
    return size - start;
  } finally {
    await handle.close();
  }
}
