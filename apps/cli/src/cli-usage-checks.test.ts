import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_BIN, type Scratch, makeScratch, policy, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
  await mkdir(join(scratch.project, '.git'));
});
afterEach(async () => {
  await scratch.cleanup();
});

const run = (args: string[], env?: Record<string, string | undefined>) =>
  runCli(args, { cwd: scratch.project, home: scratch.home, ...(env ? { env } : {}) });

describe('a HOME that is not an absolute path', () => {
  it('is a usage error naming HOME for every command that reads the home folder, and nothing is written', async () => {
    for (const home of ['rel', '']) {
      for (const args of [
        ['run', '--sim', 'hi'],
        ['config'],
        ['agents', 'list'],
        ['transcripts', 'list'],
        ['memory', 'list'],
      ]) {
        const result = await run(args, { HOME: home });
        const what = `HOME=${home} ${args.join(' ')}`;
        expect(result.code, what).toBe(2);
        expect(result.stderr, what).toBe(
          `delegate: HOME is ${JSON.stringify(home)}, not an absolute path, so there is no home folder to read ~/.delegate (settings, agents, transcripts) from. Set HOME to an absolute path (export HOME=/home/<you>), or unset it to use your account's home folder.\n`,
        );
        expect(result.stdout, what).toBe('');
      }
    }
    expect(existsSync(join(scratch.project, 'rel'))).toBe(false);
    expect(await readdir(scratch.project)).toEqual(['.git']);
  });
});

describe('delegate config checks the settings as run does', () => {
  it('refuses a string that is no permission rule, and a blank model, with the message and exit code of run', async () => {
    await mkdir(join(scratch.project, '.delegate'));
    const settings = join(scratch.project, '.delegate', 'settings.json');
    for (const text of [
      '{"permissions": {"deny": ["Bash("]}}',
      '{"model": "  "}',
      '{"subagentModel": " "}',
    ]) {
      await writeFile(settings, text);
      const ran = await run(['run', '--sim', 'hi']);
      expect(ran.code, text).toBe(2);
      for (const args of [['config'], ['config', '--json']]) {
        const config = await run(args);
        expect(config.code, `${text} ${args.join(' ')}`).toBe(2);
        expect(config.stderr, text).toBe(ran.stderr);
        expect(config.stdout, text).toBe('');
      }
    }
  });

  it('refuses a bad --disallowed-tools rule and warns about a rule in another case, as run does', async () => {
    const bad = await run(['config', '--disallowed-tools', 'Bash(rm']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      (await run(['run', '--sim', '--disallowed-tools', 'Bash(rm', 'hi'])).stderr,
    );
    const cased = await run(['config', '--disallowed-tools', 'bash']);
    expect(cased.code).toBe(0);
    expect(cased.stderr).toContain('"bash" names no tool');
    expect(cased.stderr).toContain('Did you mean "Bash"?');
  });
});

describe('a flag that takes one value, given twice', () => {
  it('is a usage error naming the flag, in every command', async () => {
    for (const [args, flag] of [
      [['-p', 'hi', '-p', 'there', '--sim'], '-p/--print'],
      [['run', '-p', 'hi', '-p', 'there', '--sim'], '-p/--print'],
      [['run', '--sim', 'a.mjs', '--sim', 'b.mjs', 'hi'], '--sim'],
      [['run', '--sim', '--model', 'opus', '--model', 'haiku', 'hi'], '--model'],
      [['config', '--cwd', '.', '--cwd', '.'], '--cwd'],
      [['sim', '--port', '0', '--port', '1'], '--port'],
      [['memory', 'list', '--scope', 'user', '--scope', 'local'], '--scope'],
    ] as const) {
      const result = await run([...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(
        `delegate: ${flag} was given more than once, but it takes one value: give it once.\n`,
      );
      expect(result.stdout, args.join(' ')).toBe('');
    }
    for (const args of [
      ['run', '--sim', '--agents', '{}', '--agents', '{}', 'hi'],
      ['agents', 'list', '--agents', '{}', '--agents', '{}'],
    ]) {
      const result = await run(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(
        'delegate: --agents was given more than once, but it takes one value: give it once. Put every agent definition in one JSON object.\n',
      );
    }
  });

  it('still collects the flags the README calls repeatable', async () => {
    await mkdir(join(scratch.project, 'a'));
    await mkdir(join(scratch.project, 'b'));
    const result = await run([
      'config',
      '--json',
      '--allowed-tools',
      'Read',
      '--allowed-tools',
      'Edit',
      '--add-dir',
      'a',
      '--add-dir',
      'b',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const rows = (JSON.parse(result.stdout) as { settings: { setting: string; value: unknown }[] })
      .settings;
    expect(
      rows.filter((row) => row.setting === 'permissions.allow').map((row) => row.value),
    ).toEqual(['Read', 'Edit']);
    expect(rows.filter((row) => row.setting === 'permissions.additionalDirectories')).toHaveLength(
      2,
    );
  });
});

describe('delegate run --sim <module> without a prompt', () => {
  it('says the word was taken for a policy module when that module cannot be loaded', async () => {
    const result = await run(['run', '--sim', 'foo.mjs']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `delegate: --sim took "foo.mjs" for a policy module (a single word ending in .mjs); to run it as the prompt, put the prompt before --sim (delegate run "<prompt>" --sim). Policy module ${join(scratch.project, 'foo.mjs')} does not exist. Pass a .js/.mjs file whose default export is a policy, or omit the module to use the echo policy.\n`,
    );
    const loads = await run(['run', '--sim', policy('spawn-general')]);
    expect(loads.code).toBe(2);
    expect(loads.stderr).toMatch(/^delegate: The prompt is empty/);
  });
});

describe('sim and demo in a working directory that was deleted', () => {
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
    // Where the command runs instead of refusing (`sim` serves until stopped), it is stopped.
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    return { code, stdout, stderr };
  }

  it('are usage errors saying the folder is gone, as every other command is; help still works', async () => {
    for (const args of [
      ['sim', '--port', '0'],
      ['demo', '--fast'],
    ]) {
      const result = await runInDeletedFolder(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr, args.join(' ')).toBe(
        'delegate: the current directory cannot be read (ENOENT: it was deleted, or access to it was taken away). Change to a directory that exists, or pass --cwd with an absolute path.\n',
      );
    }
    const help = await runInDeletedFolder(['help', 'demo']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: delegate demo');
  });
});
