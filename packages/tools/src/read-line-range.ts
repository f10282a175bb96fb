import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { TextDecoder } from 'node:util';
import { DelegateError } from '@delegate/core';
import { createLineCollector } from './line-collector.js';

/** Lines taken from a file read as a stream. */
export type LineRange = {
  /** The selected lines, without line endings, each cut to `maxLineLength` characters. */
  lines: string[];
  /** Length (UTF-16 code units) of each selected line before it was cut. */
  lineLengths: number[];
  /** Number of lines in the whole file. */
  totalLines: number;
  /** SHA-256 of the whole file. */
  contentHash: string;
};

// Small enough that each decoded chunk is a young-generation string, collected quickly.
const chunkBytes = 1 << 16;

function abortedError(path: string): DelegateError {
  return new DelegateError('ABORTED', `Reading ${path} was aborted.`, { details: { path } });
}

function binaryError(path: string): DelegateError {
  return new DelegateError(
    'INVALID_ARGUMENT',
    `${path} looks like a binary file (it contains NUL bytes); only UTF-8 text files can be read.`,
    { details: { path } },
  );
}

function decodeOrThrow(options: { decoder: TextDecoder; chunk?: Buffer; path: string }): string {
  const { decoder, chunk, path } = options;
  try {
    return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
  } catch (error) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${path} is not valid UTF-8 text (probably a binary file).`,
      { cause: error, details: { path } },
    );
  }
}

/**
 * The iterator's next chunk, or a rejection with ABORTED as soon as `signal` aborts, also
 * while a read is pending. The listener lives for this one call only: racing every call
 * against one long-lived promise would keep every chunk read reachable from it.
 */
function nextOrAbort(options: {
  chunks: AsyncIterator<Buffer>;
  signal: AbortSignal | undefined;
  path: string;
}): Promise<IteratorResult<Buffer>> {
  const { chunks, signal, path } = options;
  if (signal === undefined) return chunks.next();
  if (signal.aborted) return Promise.reject(abortedError(path));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(abortedError(path));
    signal.addEventListener('abort', onAbort, { once: true });
    chunks.next().then(
      (result) => {
        signal.removeEventListener('abort', onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Streams a large UTF-8 file and keeps only lines `offset`…`offset + limit - 1`
 * (1-based), each cut to `maxLineLength` characters, hashing the whole file on the way.
 * Time is linear in the file's size and memory bounded by what is kept, however long its
 * lines. Refuses binary content; rejects with ABORTED as soon as `signal` aborts, also
 * while a read is pending.
 */
export async function readLineRange(options: {
  path: string;
  /** An open descriptor to read instead of opening `path` (left open). */
  handle?: FileHandle;
  offset: number;
  limit: number;
  /** Characters kept of each selected line (default: all). */
  maxLineLength?: number;
  /** Stops the read with an ABORTED error. */
  signal?: AbortSignal;
}): Promise<LineRange> {
  const { path, signal } = options;
  if (signal?.aborted === true) throw abortedError(path);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const hash = createHash('sha256');
  const collector = createLineCollector({
    offset: options.offset,
    limit: options.limit,
    keep: options.maxLineLength ?? Number.POSITIVE_INFINITY,
  });
  let atStart = true;
  const take = (text: string): void => {
    let piece = text;
    if (atStart && piece !== '') {
      if (piece.charCodeAt(0) === 0xfeff) piece = piece.slice(1);
      atStart = false;
    }
    collector.add(piece);
  };

  const stream =
    options.handle === undefined
      ? createReadStream(path, { highWaterMark: chunkBytes })
      : options.handle.createReadStream({ start: 0, autoClose: false, highWaterMark: chunkBytes });
  const chunks = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await nextOrAbort({ chunks, signal, path });
      if (next.done === true) break;
      const chunk = next.value;
      hash.update(chunk);
      if (chunk.includes(0)) throw binaryError(path);
      take(decodeOrThrow({ decoder, chunk, path }));
    }
    take(decodeOrThrow({ decoder, path }));
  } finally {
    stream.destroy();
  }
  const { lines, lineLengths, totalLines } = collector.finish();
  return { lines, lineLengths, totalLines, contentHash: hash.digest('hex') };
}
