import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import { UsageError } from '../exit-codes.js';

/**
 * The home folder: `HOME` when it is set, else the account's (from the password database).
 * A `HOME` that is set but is not an absolute path (`HOME=`, `HOME=rel`) is a `UsageError`:
 * Node's `homedir()` would return it as it is, and `~/.delegate` (settings, agents,
 * transcripts) would be taken from the current directory, inside the project.
 */
export function homeDirectory(env: NodeJS.ProcessEnv): string {
  const home = env['HOME'];
  if (home !== undefined) {
    if (isAbsolute(home)) return home;
    throw new UsageError(
      `HOME is ${JSON.stringify(home)}, not an absolute path, so there is no home folder to read ~/.delegate (settings, agents, transcripts) from. Set HOME to an absolute path (export HOME=/home/<you>), or unset it to use your account's home folder.`,
    );
  }
  let account: string;
  try {
    account = homedir();
  } catch {
    account = '';
  }
  if (isAbsolute(account)) return account;
  throw new UsageError(
    'HOME is not set and the account has no home folder, so there is no home folder to read ~/.delegate (settings, agents, transcripts) from. Set HOME to an absolute path.',
  );
}
