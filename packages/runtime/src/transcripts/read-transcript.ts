import { readFile } from 'node:fs/promises';
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
 * Reads a transcript file back into messages. A torn last line (a crash mid-write) is
 * skipped with a warning (`options.onWarning`); a torn or invalid line anywhere else is
 * an `INVALID_ARGUMENT` error naming the file and the line number.
 */
export async function readTranscript(
  path: string,
  options: ReadTranscriptOptions = {},
): Promise<TranscriptEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new DelegateError('NOT_FOUND', `No transcript at ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
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
