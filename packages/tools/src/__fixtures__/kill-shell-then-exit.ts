// Starts a background shell with a long kill grace, kills it once it runs, and prints when the
// shell has ended; then leaves nothing to do, so the process should exit at once.
import { BackgroundShellRegistry } from '../background-shell-registry.js';

const registry = new BackgroundShellRegistry({ killGraceMs: 60_000 });
const shell = await registry.start({
  command: 'sleep 60',
  cwd: process.cwd(),
  description: 'killed at once',
});
registry.kill(shell.taskId);
const ended = await registry.wait(shell.taskId, 10_000);
process.stdout.write(`${ended?.status ?? 'missing'} ${Date.now()}\n`);
