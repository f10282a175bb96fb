import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { DelegateError } from '@delegate/core';

/** Lines taken from a file read as a stream. */
export type LineRange = {
  /** The selected lines, without line endings. */
  lines: string[];
  /** Number of lines in the whole file. */
  totalLines: number;
  /** SHA-256 of the whole file. */
  contentHash: string;
};

/**
 * Streams a large UTF-8 file and keeps only lines `offset`…`offset + limit - 1`
 * (1-based), hashing the whole file on the way. Refuses binary content.
 */
export async function readLineRange(options: {
  path: string;
  /** An open descriptor to read instead of opening `path` (left open). */
  handle?: FileHandle;
  offset: number;
  limit: number;
}): Promise<LineRange> {
  const { path, offset, limit } = options;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const hash = createHash('sha256');
  const lines: string[] = [];
  const lastWanted = offset + limit - 1;
  let lineNumber = 1;
  let partial = '';
  let isFirstChunk = true;

  const takeLine = (line: string): void => {
    if (lineNumber >= offset && lineNumber <= lastWanted)
      lines.push(line.endsWith('\r') ? line.slice(0, -1) : line);
    lineNumber++;
  };

  const stream =
    options.handle === undefined
      ? createReadStream(path)
      : options.handle.createReadStream({ start: 0, autoClose: false });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    if (chunk.includes(0)) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${path} looks like a binary file (it contains NUL bytes); only UTF-8 text files can be read.`,
        { details: { path } },
      );
    }
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch (error) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${path} is not valid UTF-8 text (probably a binary file).`,
        {
          cause: error,
          details: { path },
        },
      );
    }
    if (isFirstChunk && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    isFirstChunk = false;
    const pieces = (partial + text).split('\n');
    partial = pieces.pop() ?? '';
    for (const piece of pieces) takeLine(piece);
  }
  if (partial !== '') takeLine(partial);
  return { lines, totalLines: lineNumber - 1, contentHash: hash.digest('hex') };
}
