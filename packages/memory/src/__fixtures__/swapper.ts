import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const script = fileURLToPath(new URL('./swap-directory.mjs', import.meta.url));

/**
 * A second process that swaps `path` for a symbolic link to `target` and back (see
 * swap-directory.mjs); `start` runs one, `stop` kills it and waits for its exit. One is stopped
 * after each test of the file that calls this.
 */
export function useSwapper(): { start: (path: string, target: string) => void; stop: () => Promise<void> } {
  let child: ChildProcess | undefined;
  const stop = async (): Promise<void> => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  };
  afterEach(stop);
  return {
    start: (path, target) => {
      child = spawn(process.execPath, [script, path, target], { stdio: 'ignore' });
    },
    stop,
  };
}
