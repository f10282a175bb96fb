import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built CLI (see build-cli.ts). */
export const CLI_BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url));

/** A policy module of this folder, for `--sim <module>`. */
export function policy(name: string): string {
  return fileURLToPath(new URL(`./policies/${name}.mjs`, import.meta.url));
}

/** What a CLI run printed and how it ended. */
export type CliRun = { code: number | null; stdout: string; stderr: string };

/** A scratch folder with a home and a project inside, removed by `cleanup`. */
export type Scratch = { root: string; home: string; project: string; cleanup: () => Promise<void> };

/** Makes a scratch folder: `home` (the child's HOME) and `project` (its working directory). */
export async function makeScratch(): Promise<Scratch> {
  const root = await mkdtemp(join(tmpdir(), 'delegate-cli-test-'));
  const home = join(root, 'home');
  const project = join(root, 'project');
  await mkdir(home, { recursive: true });
  await mkdir(project, { recursive: true });
  return { root, home, project, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/**
 * Runs the built `delegate` with `args` in `cwd`, with a scratch HOME, no API key, no
 * colors, and `input` on stdin; resolves once it exits.
 */
export function runCli(
  args: readonly string[],
  options: {
    cwd: string;
    home: string;
    env?: Record<string, string | undefined>;
    input?: string;
    timeoutMs?: number;
  },
): Promise<CliRun> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ANTHROPIC_') && key !== 'FORCE_COLOR')
      env[key] = value;
  }
  env['HOME'] = options.home;
  env['NO_COLOR'] = '1';
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: options.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `delegate ${args.join(' ')} did not exit within ${options.timeoutMs ?? 60_000} ms.\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
