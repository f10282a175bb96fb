import { readFile } from 'node:fs/promises';
import { DelegateError, Message, errorMessage } from '@delegate/core';
import type { TranscriptEntry } from './transcript-store.js';

/**
 * Reads a transcript file back into messages. A torn last line (a crash mid-write) is
 * skipped; any other bad line is an error naming the file and line.
 */
export async function readTranscript(path: string): Promise<TranscriptEntry[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new DelegateError('NOT_FOUND', `No transcript at ${path}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
  const lines = text.split('\n');
  let lastLine = lines.length - 1;
  while (lastLine >= 0 && lines[lastLine]!.trim() === '') lastLine--;
  const entries: TranscriptEntry[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === '') continue;
    const isLast = index === lastLine;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      if (isLast) break;
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${path}:${index + 1}: not valid JSON (${errorMessage(error)})`,
      );
    }
    const parsed = Message.safeParse(value);
    if (!parsed.success) {
      throw new DelegateError(
        'INVALID_ARGUMENT',
        `${path}:${index + 1}: not a transcript message (${parsed.error.issues[0]?.message ?? 'invalid'})`,
      );
    }
    entries.push(value as TranscriptEntry);
  }
  return entries;
}
