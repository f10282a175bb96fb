import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { DelegateError, Message, errorMessage } from '@delegate/core';
import type { TranscriptEntry } from './transcript-store.js';

/** Options of {@link readTranscript}. */
export type ReadTranscriptOptions = {
  /**
   * Called with a message when a torn last line (a crash mid-write) is skipped. Default: a
   * process warning with code `DELEGATE_TORN_TRANSCRIPT`.
   */
  onWarning?: (message: string) => void;
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
      `${path}:${lineNumber}: torn or corrupt transcript line (not valid JSON: ${errorMessage(error)}). Only the last line of a transcript may be torn by a crash; this one has lines after it, so the file was changed by something else. Restore the file, or remove line ${lineNumber} and what follows it.`,
      { details: { path, line: lineNumber } },
    );
  }
  const parsed = Message.safeParse(value);
  if (!parsed.success) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${path}:${lineNumber}: not a transcript message (${parsed.error.issues[0]?.message ?? 'invalid'}). Restore the file, or remove line ${lineNumber}.`,
      { details: { path, line: lineNumber } },
    );
  }
  return value as TranscriptEntry;
}

/**
 * The whole text of a transcript file. Opened without blocking and checked to be a regular
 * file first: a FIFO in the transcript folder would otherwise hang every reader (a
 * `transcripts list`, a resume) and a device such as `/dev/zero` would never end.
 */
async function readTranscriptText(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new DelegateError('NOT_FOUND', `No transcript at ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${path} is not a regular file (a FIFO, a device, a socket or a directory), so it is not a transcript. Remove it from the transcript folder, or give the path of a .jsonl file.`,
        { details: { path } },
      );
    }
    return await handle.readFile('utf8');
  } catch (error) {
    if (error instanceof DelegateError) throw error;
    throw new DelegateError('NOT_FOUND', `No transcript at ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  } finally {
    await handle.close();
  }
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
  const text = await readTranscriptText(path);
  const onWarning = options.onWarning ?? warnByDefault;
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
