// Starts a background shell in the default output directory (under the TMPDIR the test gives),
// prints the pids of the shell and of a process it spawned, then waits to be killed with
// SIGKILL, so its exit hook never runs and the shell's process group is left behind.
import { readFile } from 'node:fs/promises';
import { BackgroundShellRegistry } from '../background-shell-registry.js';

const registry = new BackgroundShellRegistry();
const shell = await registry.start({
  command: 'sleep 60 & echo pid:$!; wait',
  cwd: process.cwd(),
  description: 'orphan to be',
});
for (let attempt = 0; attempt < 250; attempt++) {
  const match = /pid:(\d+)/.exec(await readFile(shell.outputPath, 'utf8'));
  if (match) {
    process.stdout.write(`${shell.pid} ${match[1]}\n`);
    setInterval(() => undefined, 1000);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
