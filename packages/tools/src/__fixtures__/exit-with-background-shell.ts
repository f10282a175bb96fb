// Starts a background shell, prints the pid of a process it spawned, then exits the host
// process while the shell still runs; the registry's exit hook must kill the group.
import { readFile } from 'node:fs/promises';
import { BackgroundShellRegistry } from '../background-shell-registry.js';

const outputDirectory = process.argv[2] ?? '';
const registry = new BackgroundShellRegistry({ outputDirectory });
const shell = await registry.start({
  command: 'sleep 30 & echo pid:$!; wait',
  cwd: outputDirectory,
  description: 'sleeper',
});
for (let attempt = 0; attempt < 100; attempt++) {
  const output = await readFile(shell.outputPath, 'utf8');
  const match = /pid:(\d+)/.exec(output);
  if (match) {
    process.stdout.write(`${match[1]} ${shell.pid}\n`);
    process.exit(0);
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
process.exit(1);
