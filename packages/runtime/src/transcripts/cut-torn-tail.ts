import { open } from 'node:fs/promises';

const CHUNK = 64 * 1024;

/**
 * Cuts a torn last line from a JSONL file: when the file does not end in a newline (a
 * crash stopped a write halfway), everything after its last newline is removed, so the
 * next append starts on a line of its own. Returns the number of bytes cut (0 when the
 * file ends cleanly, is empty, or does not exist).
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
    // Walk back to the last newline, a chunk at a time (a line can be long).
    let end = size - 1;
    const chunk = Buffer.alloc(CHUNK);
    while (end > 0) {
      const start = Math.max(0, end - CHUNK);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const newline = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (newline !== -1) {
        await handle.truncate(start + newline + 1);
        return size - (start + newline + 1);
      }
      end = start;
    }
    await handle.truncate(0);
    return size;
  } finally {
    await handle.close();
  }
}
