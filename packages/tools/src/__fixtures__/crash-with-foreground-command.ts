// Runs a foreground command that starts a grandchild, prints both pids, then crashes the host
// process with an uncaught error (or exits, with `exit` as the first argument, or is killed,
// with `sigkill`, once the command's record is written) while the command still runs; the
// command's process group must not outlive the host (after a SIGKILL: once the next process
// reaps it).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runShellCommand } from '../run-shell-command.js';
import { shellRecordDirectory } from '../shell-records.js';

const how = process.argv[2] ?? 'crash';
const directory = process.argv[3] ?? '';
const pidFile = join(directory, 'grandchild.pid');
const running = runShellCommand({
  command: `sleep 30 & echo $! > ${JSON.stringify(pidFile)}; wait`,
  cwd: directory,
  timeoutMs: 60_000,
  maxOutputBytes: 1024,
});
void running;
for (let attempt = 0; attempt < 200; attempt++) {
  const grandchild = await readFile(pidFile, 'utf8').catch(() => '');
  if (grandchild.trim() !== '') {
    process.stdout.write(`${grandchild.trim()}\n`);
    if (how === 'exit') process.exit(0);
    if (how === 'sigkill') {
      for (let wait = 0; wait < 250; wait++) {
        if ((await readdir(shellRecordDirectory()).catch(() => [])).length > 0)
          process.kill(process.pid, 'SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      process.exit(2);
    }
    setTimeout(() => {
      throw new Error('the host crashed while its command ran');
    }, 0);
    await new Promise(() => undefined);
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
process.exit(1);
