import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCommandHook } from './run-command-hook.js';

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'delegate-hook-')));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('runCommandHook', () => {
  it('gives the command the call as JSON on stdin, in its cwd, with extra environment', async () => {
    const result = await runCommandHook({
      command: 'cat > input.json; echo "$CLAUDE_PROJECT_DIR"; echo oops >&2; exit 2',
      input: { tool_name: 'Bash', tool_input: { command: 'rm -rf /' } },
      cwd: dir,
      env: { CLAUDE_PROJECT_DIR: '/the/project' },
    });
    expect(result).toEqual({ exitCode: 2, stdout: '/the/project\n', stderr: 'oops\n' });
    expect(JSON.parse(await readFile(join(dir, 'input.json'), 'utf8'))).toEqual({
      tool_name: 'Bash',
      tool_input: { command: 'rm -rf /' },
    });
  });

  it('does not mind a command that never reads its input', async () => {
    const result = await runCommandHook({
      command: 'exit 0',
      input: { big: 'x'.repeat(1_000_000) },
      cwd: dir,
    });
    expect(result.exitCode).toBe(0);
  });

  it('kills a command (and what it started) at its timeout', async () => {
    const marker = `30.${process.pid}${Date.now() % 1000}1`;
    await writeFile(join(dir, 'slow.sh'), `sleep ${marker} & sleep ${marker}\n`);
    const result = await runCommandHook({
      command: 'sh slow.sh',
      input: {},
      cwd: dir,
      timeoutSeconds: 0.2,
    });
    expect(result).toMatchObject({ exitCode: null, failure: 'timeout' });
    const alive = (): boolean => {
      try {
        return execFileSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' }).trim() !== '';
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 5_000;
    while (alive() && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive()).toBe(false);
  });

  it('kills a command when the signal aborts', async () => {
    const controller = new AbortController();
    const running = runCommandHook({
      command: 'sleep 30',
      input: {},
      cwd: dir,
      signal: controller.signal,
    });
    controller.abort();
    expect(await running).toMatchObject({ exitCode: null, failure: 'aborted' });
  });

  it('reports a working directory that does not exist instead of throwing', async () => {
    const result = await runCommandHook({ command: 'true', input: {}, cwd: join(dir, 'missing') });
    expect(result.exitCode).toBeNull();
    expect(result.failure).toMatch(/ENOENT/);
  });
});
