import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const bin = fileURLToPath(new URL('../bin.ts', import.meta.url));

export type ServerProcess = {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** Starts `delegate-server` from source as a child process and waits for its URL. */
export async function spawnServer(options: {
  args: string[];
  env: NodeJS.ProcessEnv;
}): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', bin, ...options.args], {
    cwd: root,
    env: { ...options.env, TSX_TSCONFIG_PATH: `${root}tsconfig.source.json` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk) => (out += String(chunk)));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start:\n${err}\n${out}`)),
      60_000,
    );
    child.stderr!.on('data', (chunk) => {
      err += String(chunk);
      const match = /listening on (http:\/\/\S+) /.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exit.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${err}\n${out}`));
    });
  });
  return { child, url, stdout: () => out, stderr: () => err, exit };
}
