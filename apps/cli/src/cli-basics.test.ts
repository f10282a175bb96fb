import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Scratch, makeScratch, runCli } from './__fixtures__/run-cli.js';

let scratch: Scratch;
beforeEach(async () => {
  scratch = await makeScratch();
});
afterEach(async () => {
  await scratch.cleanup();
});

const run = (args: string[], env?: Record<string, string | undefined>) =>
  runCli(args, { cwd: scratch.project, home: scratch.home, ...(env ? { env } : {}) });

describe('delegate: help, version and usage errors', () => {
  it('prints the version and help with examples for every command', async () => {
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    for (const command of [
      [],
      ['run'],
      ['demo'],
      ['agents'],
      ['transcripts'],
      ['memory'],
      ['agents', 'list'],
      ['agents', 'show'],
      ['agents', 'validate'],
      ['transcripts', 'list'],
      ['transcripts', 'show'],
      ['memory', 'list'],
      ['memory', 'show'],
      ['memory', 'clear'],
      ['sim'],
      ['config'],
      ['help'],
    ]) {
      const help = await run([...command, '--help']);
      expect(help.code, command.join(' ')).toBe(0);
      expect(help.stdout, command.join(' ')).toContain('Usage: delegate');
      expect(help.stdout, command.join(' ')).toMatch(/Examples:|Settings files/);
    }
  });

  it('prints the help of a command with `delegate help <command>`', async () => {
    const root = await run(['help']);
    expect(root.code).toBe(0);
    expect(root.stdout).toBe((await run(['--help'])).stdout);
    const nested = await run(['help', 'agents', 'show']);
    expect(nested.code).toBe(0);
    expect(nested.stdout).toBe((await run(['agents', 'show', '--help'])).stdout);
    const unknown = await run(['help', 'agents', 'bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      "delegate: there is no command 'delegate agents bogus'. The commands of 'delegate agents' are list, show, validate.\n",
    );
  });

  it("after a bad option value or a missing argument, points at that command's help, not at run", async () => {
    for (const [args, hint] of [
      [['sim', '--port', 'abc'], '(delegate sim --help shows how to use it)'],
      [['agents', 'show'], '(delegate agents show --help shows how to use it)'],
      [['--bogus'], '(delegate --help shows how to use it)'],
    ] as const) {
      const result = await run([...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trimEnd().split('\n').at(-1), args.join(' ')).toBe(hint);
      expect(result.stderr, args.join(' ')).not.toContain('to run a prompt');
    }
  });

  it('exits 2 without an API key or --sim, saying what to set', async () => {
    const result = await run(['run', 'hello']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY');
    expect(result.stderr).toContain('--sim');
    expect(result.stdout).toBe('');
  });

  it('exits 2 for a command group without its subcommand', async () => {
    for (const group of ['agents', 'transcripts', 'memory']) {
      const result = await run([group]);
      expect(result.code, group).toBe(2);
      expect(result.stderr, group).toContain(`Usage: delegate ${group}`);
    }
  });

  it('exits 2 for an unknown option, a bad choice and a bad number', async () => {
    expect((await run(['run', '--sim', '--bogus', 'x'])).code).toBe(2);
    const mode = await run(['run', '--sim', '--permission-mode', 'yolo', 'x']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('yolo');
    const turns = await run(['run', '--sim', '--max-turns', '0', 'x']);
    expect(turns.code).toBe(2);
    expect(turns.stderr).toContain('--max-turns');
  });

  it('exits 2 for a word that names no command, pointing at run and at the command list', async () => {
    const typo = await run(['agnets', 'list']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown command 'agnets'");
    expect(typo.stderr).toContain('delegate run "agnets list"');
    const unquoted = await run(['-p', 'fix', 'the', 'bug', '--sim']);
    expect(unquoted.code).toBe(2);
    expect(unquoted.stderr).toContain('delegate -p "fix the bug"');
    expect(unquoted.stdout).toBe('');
    // Subcommands still refuse words they do not take.
    const extra = await run(['config', 'now']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('too many arguments');
  });

  it('exits 2 for a policy module that does not load, saying what is wrong and how to find it', async () => {
    const broken = join(scratch.project, 'broken.mjs');
    await writeFile(broken, 'export default (\n');
    for (const args of [
      ['run', '--sim', 'broken.mjs', 'hi'],
      ['sim', '--policy', 'broken.mjs'],
    ]) {
      const result = await run(args);
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr, args[0]).toContain(
        `Policy module ${broken} failed to load: SyntaxError`,
      );
      expect(result.stderr, args[0]).toContain('node --check broken.mjs');
      expect(result.stderr.trim().split('\n'), args[0]).toHaveLength(1);
    }
  });

  it('exits 2 for an empty prompt and for a working directory that does not exist', async () => {
    expect((await run(['run', '--sim', '   '])).code).toBe(2);
    const missing = await run(['run', '--sim', '--cwd', join(scratch.root, 'nope'), 'hi']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope');
  });

  it('names a bad settings file with its path and field, and refuses to run', async () => {
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    const path = join(scratch.project, '.delegate', 'settings.json');
    await writeFile(
      path,
      JSON.stringify({ permissionMode: 'sometimes', permissions: { allow: 'Bash' } }),
    );
    const result = await run(['run', '--sim', 'hi']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(path);
    expect(result.stderr).toContain('permissionMode');
    expect(result.stderr).toContain('permissions.allow');
    await writeFile(path, '{ "model": ');
    const broken = await run(['config']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`${path}: not valid JSON`);
    await writeFile(path, JSON.stringify({ modle: 'opus' }));
    const typo = await run(['config']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown field "modle"');
  });

  it('prints a setting holding escape codes as text in the colored table, never as codes', async () => {
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    // Conceal (ESC [8m) would hide the rest of the line: a cloned repository's settings.
    await writeFile(
      join(scratch.project, '.delegate', 'settings.json'),
      JSON.stringify({ permissions: { deny: ['Bash(curl\u001b[8m hidden:*)'] } }),
    );
    const result = await run(['config'], { NO_COLOR: undefined, FORCE_COLOR: '1' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Bash(curl?[8m hidden:*)');
    expect(result.stdout).not.toContain('\u001b[8m');
    // The table is colored all the same (where each setting came from is dim).
    expect(result.stdout).toContain('\u001b[2m');
  });

  it('shows each effective setting with where it came from, and hides the API key', async () => {
    await mkdir(join(scratch.home, '.delegate'), { recursive: true });
    await writeFile(
      join(scratch.home, '.delegate', 'settings.json'),
      JSON.stringify({ model: 'haiku', permissions: { deny: ['Bash(rm:*)'] } }),
    );
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    await writeFile(
      join(scratch.project, '.delegate', 'settings.local.json'),
      JSON.stringify({ model: 'opus', permissions: { deny: ['Write'] } }),
    );
    const result = await run(['config', '--json'], {
      ANTHROPIC_API_KEY: 'sk-secret-value',
      DELEGATE_TRANSCRIPT_DIR: 'logs',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('sk-secret-value');
    const { settings, files } = JSON.parse(result.stdout) as {
      settings: Array<{ setting: string; value: unknown; origin: string }>;
      files: Array<{ origin: string; found: boolean }>;
    };
    const find = (name: string) => settings.filter((row) => row.setting === name);
    expect(find('model')[0]).toMatchObject({
      value: 'opus',
      origin: expect.stringContaining('local'),
    });
    expect(find('permissions.deny').map((row) => row.value)).toEqual(['Bash(rm:*)', 'Write']);
    expect(find('permissions.deny')[0]?.origin).toContain('user');
    expect(find('ANTHROPIC_API_KEY')[0]?.value).toBe('set (hidden)');
    expect(find('transcriptDir')[0]).toMatchObject({
      value: join(scratch.project, 'logs'),
      origin: expect.stringContaining('env'),
    });
    const flagged = JSON.parse(
      (await run(['config', '--json', '--model', 'haiku', '--disallowed-tools', 'Edit'])).stdout,
    ) as { settings: Array<{ setting: string; value: unknown; origin: string }> };
    expect(flagged.settings.find((row) => row.setting === 'model')).toMatchObject({
      value: 'haiku',
      origin: 'flag (--model)',
    });
    expect(
      flagged.settings.filter((row) => row.setting === 'permissions.deny').at(-1),
    ).toMatchObject({
      value: 'Edit',
      origin: 'flag (--disallowed-tools)',
    });
    expect(files.map((file) => [file.origin, file.found])).toEqual([
      ['user', true],
      ['project', false],
      ['local', true],
    ]);
  });

  it('keeps an untrusted project from loosening permissions through its own settings files', async () => {
    await mkdir(join(scratch.project, '.delegate'), { recursive: true });
    await writeFile(
      join(scratch.project, '.mcp.json'),
      JSON.stringify({ mcpServers: { x: { command: 'true' } } }),
    );
    await writeFile(
      join(scratch.project, '.delegate', 'settings.json'),
      JSON.stringify({
        permissionMode: 'bypassPermissions',
        mcpConfig: '.mcp.json',
        transcriptDir: '/tmp/elsewhere',
        permissions: { allow: ['Bash'], deny: ['Write'], additionalDirectories: ['..'] },
      }),
    );
    const settings = async (args: string[] = []) =>
      (
        JSON.parse((await run(['config', '--json', ...args])).stdout) as {
          settings: Array<{ setting: string; value: unknown; origin: string }>;
        }
      ).settings;
    const value = (rows: Array<{ setting: string; value: unknown }>, name: string) =>
      rows.filter((row) => row.setting === name).map((row) => row.value);
    const untrusted = await settings();
    const ignored = '(ignored: project not trusted)';
    expect(value(untrusted, 'permissionMode')).toEqual(['default', ignored]);
    expect(value(untrusted, 'mcpConfig')).toEqual(['(none)', ignored]);
    expect(value(untrusted, 'transcriptDir')).toEqual([
      join(scratch.home, '.delegate', 'transcripts'),
      ignored,
    ]);
    expect(value(untrusted, 'permissions.allow')).toEqual([
      '(none)',
      '(ignored: project not trusted)',
    ]);
    // What only restricts still applies.
    expect(value(untrusted, 'permissions.deny')).toEqual(['Write']);
    const warned = await run(['run', '--sim', '--output-format', 'json', 'hi']);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain('ignored permissionMode in');
    expect(warned.stderr).toContain('--trust-project');
    expect(JSON.parse(warned.stdout)).toMatchObject({ result: 'hi' });
    const flagged = await settings(['--trust-project']);
    expect(value(flagged, 'permissionMode')).toEqual(['bypassPermissions']);
    expect(value(flagged, 'permissions.allow')).toEqual(['Bash']);
    // Trusting the project in the user's own settings works the same way.
    await mkdir(join(scratch.home, '.delegate'), { recursive: true });
    await writeFile(
      join(scratch.home, '.delegate', 'settings.json'),
      JSON.stringify({ trustedProjects: [scratch.project] }),
    );
    expect(value(await settings(), 'projectTrusted')).toEqual([true]);
  });

  it('shows the base URL without credentials', async () => {
    const result = await run(['config', '--json'], {
      ANTHROPIC_BASE_URL: 'https://user:hunter2@proxy.example/v1?key=abc',
    });
    expect(result.stdout).not.toContain('hunter2');
    expect(result.stdout).not.toContain('key=abc');
    expect(result.stdout).toContain('https://proxy.example/v1');
  });

  it('exits 2 for an ANTHROPIC_BASE_URL that is not an http(s) URL, naming it without its credentials', async () => {
    for (const url of ['https://user:hunter2@bad host/v1', 'file:///user:hunter2@etc/passwd']) {
      const result = await run(['run', 'hello'], {
        ANTHROPIC_API_KEY: 'k',
        ANTHROPIC_BASE_URL: url,
      });
      expect(result.code, url).toBe(2);
      expect(result.stderr, url).toMatch(
        /^delegate: ANTHROPIC_BASE_URL (is not a valid URL|must be an http)/,
      );
      expect(result.stderr, url).not.toContain('hunter2');
      expect(result.stdout, url).toBe('');
    }
  });

  it('refuses a --resume id that is not a session id', async () => {
    const result = await run(['run', '--sim', '--resume', '../evil', 'hi']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not a session id');
    const empty = await run(['run', '--sim', '--resume', '', 'hi']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      'delegate: --resume: expected the id of a recorded session (`delegate transcripts list` shows them), not an empty value.\n',
    );
  });
});
