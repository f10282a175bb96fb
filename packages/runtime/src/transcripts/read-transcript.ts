import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { DelegateError, Message, errorMessage, invalidArgument } from '@delegate/core';
import type { TranscriptEntry } from './transcript-store.js';

/** Options of {@link readTranscript}. */
export type ReadTranscriptOptions = {
  /**
   * Called with a message when a torn last line (a crash mid-write) is skipped. Default: a
   * process warning with code `DELEGATE_TORN_TRANSCRIPT`.
   */
  onWarning?: (message: string) => void;
  /**
   * Read only the first `limit` messages: the file is read from its start only as far as they
   * go (and to the next line, which tells whether the last of them may be a torn line), so
   * `limit: 1` tells whether a huge transcript holds a message without loading it.
   */
  limit?: number;
};

function warnByDefault(message: string): void {
  process.emitWarning(message, { code: 'DELEGATE_TORN_TRANSCRIPT' });
}

function parseLine(options: {
  path: string;
  line: string;
  lineNumber: number;
  isLast: boolean;
  onWarning: (message: string) => void;
}): TranscriptEntry | undefined {
  const { path, lineNumber } = options;
  let value: unknown;
  try {
    value = JSON.parse(options.line);
  } catch (error) {
    if (options.isLast) {
      options.onWarning(
        `${path}:${lineNumber}: skipped a torn last line (${options.line.length} characters, not valid JSON); a crash cut it while it was written. The messages before it are intact.`,
      );
      return undefined;
    }
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${path}:${lineNumber}: torn or corrupt transcript line (not valid JSON: ${errorMessage(error)}). Only the last line of a transcript may be torn by a crash; this one has lines after it, so the file was changed by something else. Restore the file, or remove that one line (the lines after it are read as they are).`,
      { details: { path, line: lineNumber } },
    );
  }
  const parsed = Message.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${path}:${lineNumber}: not a transcript message (${field}${issue?.message ?? 'invalid'}). Restore the file, or remove line ${lineNumber}.`,
      { details: { path, line: lineNumber } },
    );
  }
  return value as TranscriptEntry;
}

/**
 * Runs `read` on a transcript file, opened without blocking and checked to be a regular file
 * first: a FIFO in the transcript folder would otherwise hang every reader (a
 * `transcripts list`, a resume) and a device such as `/dev/zero` would never end.
 */
async function withTranscriptFile<T>(
  path: string,
  read: (handle: FileHandle) => Promise<T>,
): Promise<T> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    // Only a missing file (or folder) is no transcript; one that cannot be opened says why.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new DelegateError('NOT_FOUND', `No transcript at ${path}: ${errorMessage(error)}`, {
        cause: error,
        details: { path },
      });
    throw new DelegateError(
      'FILE_SYSTEM_ERROR',
      `Cannot open the transcript at ${path}: ${errorMessage(error)}. Check its permissions.`,
      { cause: error, details: { path } },
    );
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${path} is not a regular file (a FIFO, a device, a socket or a directory), so it is not a transcript. Remove it from the transcript folder, or give the path of a .jsonl file.`,
        { details: { path } },
      );
    }
    return await read(handle);
  } catch (error) {
    if (error instanceof DelegateError) throw error;
    throw new DelegateError(
      'FILE_SYSTEM_ERROR',
      `Cannot read the transcript at ${path}: ${errorMessage(error)}.`,
      { cause: error, details: { path } },
    );
  } finally {
    await handle.close();
  }
}

const CHUNK_BYTES = 64 * 1024;
const NON_BLANK = /\S/;

/**
 * The first `limit` messages of a transcript, reading from the start only as far as needed:
 * each line is parsed once the next non-blank character (or the end of the file) shows whether
 * it is the last one, which alone may be torn.
 */
async function readTranscriptHead(
  path: string,
  handle: FileHandle,
  limit: number,
  onWarning: (message: string) => void,
): Promise<TranscriptEntry[]> {
  const decoder = new StringDecoder('utf8');
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let text = '';
  let ended = false;
  const readMore = async (): Promise<void> => {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null);
    if (bytesRead === 0) {
      ended = true;
      text += decoder.end();
    } else text += decoder.write(chunk.subarray(0, bytesRead));
  };
  const entries: TranscriptEntry[] = [];
  let lineNumber = 0;
  while (entries.length < limit) {
    let newline = text.indexOf('\n');
    while (newline === -1 && !ended) {
      const searched = text.length;
      await readMore();
      newline = text.indexOf('\n', searched);
    }
    const line = newline === -1 ? text : text.slice(0, newline);
    text = newline === -1 ? '' : text.slice(newline + 1);
    lineNumber += 1;
    if (line.trim() === '') {
      if (newline === -1) break;
      continue;
    }
    while (!ended && !NON_BLANK.test(text)) await readMore();
    const isLast = !NON_BLANK.test(text);
    const entry = parseLine({ path, line, lineNumber, isLast, onWarning });
    if (entry) entries.push(entry);
    if (isLast) break;
  }
  return entries;
}

/**
 * Reads a transcript file back into messages. A torn last line (a crash mid-write) is
 * skipped with a warning (`options.onWarning`); a torn or invalid line anywhere else is
 * an `INVALID_ARGUMENT` error naming the file and the line number.
 */
export async function readTranscript(
  path: string,
  options: ReadTranscriptOptions = {},
): Promise<TranscriptEntry[]> {
  const onWarning = options.onWarning ?? warnByDefault;
  const { limit } = options;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0))
    throw invalidArgument({
      where: 'readTranscript()',
      option: 'options.limit',
      expected: 'a whole number above 0 when set',
      value: limit,
    });
  if (limit !== undefined)
    return withTranscriptFile(path, (handle) => readTranscriptHead(path, handle, limit, onWarning));
  const text = await withTranscriptFile(path, (handle) => handle.readFile('utf8'));
  const lines = text.split('\n');
  let lastLine = lines.length - 1;
  while (lastLine >= 0 && lines[lastLine]!.trim() === '') lastLine--;
  const entries: TranscriptEntry[] = [];
  for (let index = 0; index <= lastLine; index++) {
    const line = lines[index]!;
    if (line.trim() === '') continue;
    const entry = parseLine({
      path,
      line,
      lineNumber: index + 1,
      isLast: index === lastLine,
      onWarning,
    });
    if (entry) entries.push(entry);
  }
  return entries;
}
