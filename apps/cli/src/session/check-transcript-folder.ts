import { statSync } from 'node:fs';
import { UsageError } from '../exit-codes.js';

/**
 * Refuses, as a usage error before anything runs, a transcript folder that is something else
 * (a file in the way): no transcript could be written there, so the run could never be resumed,
 * and saying so only at its end wastes the run. A folder that does not exist yet is fine (it is
 * made); one that cannot be checked is left to the writes, which report their own failure.
 */
export function checkTranscriptFolder(path: string, where: string | undefined): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    return;
  }
  if (isDirectory) return;
  throw new UsageError(
    `The transcript folder ${path}${where ? ` (from ${where})` : ''} is not a folder: a file is in the way, so no transcript could be written and the session could not be resumed. Pass --transcript-dir <folder>, or move the file.`,
  );
}
