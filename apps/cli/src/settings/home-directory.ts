import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';

/** The home folder: `HOME` when it is an absolute path, else the OS's. */
export function homeDirectory(env: NodeJS.ProcessEnv): string {
  const home = env['HOME'];
  return home && isAbsolute(home) ? home : homedir();
}
