import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Builds the CLI bundle once before the tests that run it as a child process. */
export default function buildCli(): void {
  const appDir = fileURLToPath(new URL('../../', import.meta.url));
  execFileSync(`${appDir}node_modules/.bin/tsup`, [], {
    cwd: appDir,
    stdio: 'pipe',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
