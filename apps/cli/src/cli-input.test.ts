import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, type Scratch, makeScratch, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
});
afterEach(async () => {
  await scratch.cleanup();
});

const run = (
  args: string[],
  options: { input?: string; env?: Record<string, string | undefined> } = {},
) => runCli(args, { cwd: scratch.project, home: scratch.home, ...options });

/** Starts the built CLI in the scratch project with `stdin` as given; what it printed and its code. */
async function spawnCli(
  args: string[],
  stdin: 'pipe' | 'ignore',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: scratch.project,
    env: { ...process.env, HOME: scratch.home, NO_COLOR: '1' },
    stdio: [stdin, 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stdin?.destroy();
  return { code, stdout, stderr };
}

describe('the prompt and stdin', () => {
  it('puts text piped on stdin after the prompt argument, as claude -p does', async () => {
    const piped = await run(['-p', '--sim', 'explain this:'], { input: 'PIPED CONTENT\n' });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('explain this:\n\nPIPED CONTENT\n');
    const viaRun = await run(['run', '--sim', '--output-format', 'json', 'explain'], {
      input: 'line 1\nline 2\n',
    });
    expect((JSON.parse(viaRun.stdout) as { result: string }).result).toBe(
      'explain\n\nline 1\nline 2',
    );
    const empty = await run(['run', '--sim', 'just the prompt'], { input: ' \n' });
    expect(empty.stdout).toBe('just the prompt\n');
  });

  it('runs a prompt argument without waiting long for a stdin nobody writes to, or for /dev/null', async () => {
    const startedAt = Date.now();
    // stdin stays open and empty, as a parent that never writes leaves it.
    const open = await spawnCli(['run', '--sim', 'no input'], 'pipe');
    expect(open.code, open.stderr).toBe(0);
    expect(open.stdout).toBe('no input\n');
    expect(open.stderr).toContain('stdin gave no input within 3s, so the prompt runs without it');
    expect(Date.now() - startedAt).toBeLessThan(15_000);
    const devNull = await spawnCli(['run', '--sim', 'from /dev/null'], 'ignore');
    expect(devNull.code, devNull.stderr).toBe(0);
    expect(devNull.stderr).not.toContain('stdin gave no input');
  });
});

describe('the policy module of --sim', () => {
  it('takes a prompt with spaces that ends in .ts for the prompt, and says when a word was taken for a module', async () => {
    const prompt = await run(['run', '--sim', 'Explain src/index.ts']);
    expect(prompt.code, prompt.stderr).toBe(0);
    expect(prompt.stdout).toBe('Explain src/index.ts\n');
    const module = await run(['run', '--sim', 'index.ts', 'explain']);
    expect(module.code).toBe(2);
    expect(module.stderr).toContain(
      '--sim took "index.ts" for a policy module (a single word ending in .ts); to run it as the prompt, put the prompt before --sim',
    );
    const promptFirst = await run(['run', 'index.ts', '--sim']);
    expect(promptFirst.stdout).toBe('index.ts\n');
  });

  const stripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);
  it.skipIf(stripsTypes)(
    'says that Node.js needs a TypeScript loader for a .ts policy module, and what to do',
    async () => {
      await writeFile(join(scratch.project, 'policy.ts'), 'export default (): string => "hi";\n');
      for (const args of [
        ['run', '--sim', 'policy.ts', 'hi'],
        ['sim', '--policy', 'policy.ts'],
      ]) {
        const result = await run(args);
        expect(result.code, args[0]).toBe(2);
        expect(result.stderr, args[0]).toContain(
          `cannot import a TypeScript module without a loader. Compile it to JavaScript`,
        );
        expect(result.stderr, args[0]).toContain('NODE_OPTIONS="--import tsx"');
        expect(result.stderr, args[0]).not.toContain('node --check');
      }
    },
  );
});

describe('a working directory that was deleted', () => {
  /** Runs the built CLI from a folder removed just before it starts. */
  async function runInDeletedFolder(args: string[]) {
    const gone = join(scratch.root, 'gone');
    await mkdir(gone);
    const child = spawn(
      'sh',
      ['-c', 'cd "$0" && rmdir "$0" && exec "$@"', gone, process.execPath, CLI_BIN, ...args],
      {
        env: { ...process.env, HOME: scratch.home, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stdout, stderr };
  }

  it('prints the version and help, runs with an absolute --cwd, and otherwise says the folder is gone', async () => {
    const version = await runInDeletedFolder(['--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
    const help = await runInDeletedFolder(['run', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: delegate run');
    const withCwd = await runInDeletedFolder(['run', '--sim', '--cwd', scratch.project, 'hi']);
    expect(withCwd.code, withCwd.stderr).toBe(0);
    expect(withCwd.stdout).toBe('hi\n');
    for (const args of [['run', '--sim', 'hi'], ['agents', 'list'], ['config']]) {
      const result = await runInDeletedFolder(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(
        'delegate: the current directory cannot be read (ENOENT: it was deleted, or access to it was taken away). Change to a directory that exists, or pass --cwd with an absolute path.\n',
      );
    }
  });
});

describe('a model that is only white space', () => {
  it('is a usage error naming the flag, the variable or the settings file, as an empty --model is', async () => {
    const expected = 'expected a model: sonnet, opus, haiku or a model id, not an empty value.\n';
    const flag = await run(['run', '--sim', '--model', '   ', 'hi']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toBe(`delegate: --model: ${expected}`);
    const env = await run(['run', '--sim', 'hi'], { env: { ANTHROPIC_MODEL: '   ' } });
    expect(env.code).toBe(2);
    expect(env.stderr).toBe(`delegate: ANTHROPIC_MODEL: ${expected}`);
    const settings = join(scratch.home, '.delegate', 'settings.json');
    await mkdir(join(scratch.home, '.delegate'));
    await writeFile(settings, '{"model": "  "}\n');
    const file = await run(['run', '--sim', 'hi']);
    expect(file.code).toBe(2);
    expect(file.stderr).toBe(`delegate: model in ${settings}: ${expected}`);
  });
});

describe('usage errors of the command groups', () => {
  it('says which command `delegate agents help <word>` does not know, as `delegate help` does', async () => {
    const unknown = await run(['agents', 'help', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      "delegate: there is no command 'delegate agents nope'. The commands of 'delegate agents' are list, show, validate.\n",
    );
    const known = await run(['agents', 'help', 'show']);
    expect(known.code).toBe(0);
    expect(known.stdout).toContain('Usage: delegate agents show');
    const memory = await run(['memory', 'help', 'clear']);
    expect(memory.stdout).toContain('Usage: delegate memory clear');
  });

  it('refuses an empty --agents in the agents commands with the message of delegate run', async () => {
    const message =
      'delegate: --agents: expected agent definitions as JSON text, or the path of a JSON file, not an empty value.\n';
    for (const args of [
      ['run', '--sim', '--agents', '', 'hi'],
      ['agents', 'list', '--agents', ''],
      ['agents', 'show', 'Explore', '--agents', ''],
      ['agents', 'validate', '--agents', ''],
    ]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(message);
    }
  });
});
