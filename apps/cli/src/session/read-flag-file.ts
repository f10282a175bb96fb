import { readConfinedFile } from '@delegate/agent-defs';
import { UsageError } from '../exit-codes.js';

/** Most bytes `delegate` reads from a file named by a flag (`--agents`, `--mcp-config`). */
export const MAX_FLAG_FILE_BYTES = 4 * 1024 * 1024;

/**
 * Reads the UTF-8 text of a file named by a command-line flag. Only a regular file of at most
 * {@link MAX_FLAG_FILE_BYTES} is read: a FIFO or a device such as /dev/zero would hang the run
 * or fill memory. Throws a `UsageError` that names the flag and the path.
 */
export function readFlagFile(options: {
  /** The flag, as the message names it: `--agents`. */
  flag: string;
  /** The absolute path. */
  path: string;
  /** Said after "no such file" when the file is missing. */
  missingHint?: string;
}): string {
  const { flag, path } = options;
  const read = readConfinedFile(path, { maxBytes: MAX_FLAG_FILE_BYTES });
  if (read.ok) return read.bytes.toString('utf8');
  if (read.code === 'missing') {
    throw new UsageError(
      `${flag} ${path}: no such file${options.missingHint ? `; ${options.missingHint}` : ''}.`,
    );
  }
  throw new UsageError(`${flag} ${path}: ${read.reason}. Give the path of a JSON file.`);
}
