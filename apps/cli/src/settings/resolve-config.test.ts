import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../exit-codes.js';
import { resolveConfig } from './resolve-config.js';

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-config-')));
  await mkdir(join(root, 'home', '.delegate'), { recursive: true });
  await mkdir(join(root, 'repo', '.git'), { recursive: true });
  await mkdir(join(root, 'repo', '.delegate'), { recursive: true });
  await mkdir(join(root, 'repo', 'sub'), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const write = (path: string, value: unknown) => writeFile(join(root, path), JSON.stringify(value));

describe('resolveConfig', () => {
  it('layers user < project < local < environment < flags, and adds permission lists up', async () => {
    await write('home/.delegate/settings.json', {
      model: 'haiku',
      fork: false,
      transcriptDir: '~/logs',
      permissions: { allow: ['Read'] },
    });
    await write('repo/.delegate/settings.json', {
      model: 'opus',
      permissions: { deny: ['Bash(rm:*)'], additionalDirectories: ['sub'] },
    });
    await write('repo/.delegate/settings.local.json', { maxTurns: 9 });
    const config = resolveConfig({
      flags: { allowedTools: ['Edit'], maxTurns: 3, trustProject: true },
      env: { HOME: join(root, 'home'), ANTHROPIC_MODEL: 'sonnet' },
      processCwd: join(root, 'repo', 'sub'),
    });
    expect(config.projectRoot).toBe(join(root, 'repo'));
    expect(config.model).toMatchObject({ value: 'sonnet', origin: 'env' });
    expect(config.fork).toMatchObject({ value: false, origin: 'user' });
    expect(config.maxTurns).toMatchObject({ value: 3, origin: 'flag' });
    expect(config.allowRules.map((rule) => [rule.value, rule.origin])).toEqual([
      ['Read', 'user'],
      ['Edit', 'flag'],
    ]);
    expect(config.denyRules[0]).toMatchObject({ value: 'Bash(rm:*)', origin: 'project' });
    // Paths in a settings file are relative to the folder holding its .delegate folder.
    expect(config.additionalDirectories[0]?.value).toBe(join(root, 'repo', 'sub'));
    // `~/` is the home folder.
    expect(config.transcriptDir).toMatchObject({
      value: join(root, 'home', 'logs'),
      origin: 'user',
    });
  });

  it('refuses a settings file with a bad field, naming the file and the field', async () => {
    await write('repo/.delegate/settings.json', { maxTurns: -1 });
    const attempt = () =>
      resolveConfig({
        flags: {},
        env: { HOME: join(root, 'home') },
        processCwd: join(root, 'repo'),
      });
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(
      `${join(root, 'repo', '.delegate', 'settings.json')}: invalid settings: maxTurns`,
    );
  });

  it('refuses a settings file with an unknown field, naming the file and the field', async () => {
    await write('repo/.delegate/settings.json', { modle: 'sonnet' });
    const attempt = () =>
      resolveConfig({
        flags: {},
        env: { HOME: join(root, 'home') },
        processCwd: join(root, 'repo'),
      });
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(join(root, 'repo', '.delegate', 'settings.json'));
    expect(attempt).toThrow(/modle/);
  });

  it('refuses an extra directory that does not exist', async () => {
    expect(() =>
      resolveConfig({
        flags: { addDir: ['missing'] },
        env: { HOME: join(root, 'home') },
        processCwd: join(root, 'repo'),
      }),
    ).toThrow(/missing is not an existing directory/);
  });

  it('applies only the restricting settings of an untrusted project, and records the rest', async () => {
    await write('repo/.delegate/settings.json', {
      permissionMode: 'acceptEdits',
      permissions: { allow: ['Bash'], deny: ['Write'], additionalDirectories: ['sub'] },
    });
    const config = resolveConfig({
      flags: {},
      env: { HOME: join(root, 'home') },
      processCwd: join(root, 'repo'),
    });
    expect(config.projectTrusted).toBe(false);
    expect(config.permissionMode.value).toBe('default');
    expect(config.allowRules).toEqual([]);
    expect(config.additionalDirectories).toEqual([]);
    expect(config.denyRules.map((rule) => rule.value)).toEqual(['Write']);
    expect(config.ignored.map((entry) => entry.field).sort()).toEqual([
      'permissionMode',
      'permissions.additionalDirectories',
      'permissions.allow',
    ]);
    await write('home/.delegate/settings.json', { trustedProjects: [join(root, 'repo')] });
    const trusted = resolveConfig({
      flags: {},
      env: { HOME: join(root, 'home') },
      processCwd: join(root, 'repo', 'sub'),
    });
    expect(trusted.projectTrusted).toBe(true);
    expect(trusted.permissionMode.value).toBe('acceptEdits');
    expect(trusted.ignored).toEqual([]);
  });

  it.each([
    ['a link out of the project', 'logs/run'],
    ['the home folder', '~/elsewhere'],
  ])(
    "ignores an untrusted project's transcriptDir that leads outside it through %s",
    async (_, transcriptDir) => {
      await mkdir(join(root, 'outside'));
      await symlink(join(root, 'outside'), join(root, 'repo', 'logs'));
      await write('repo/.delegate/settings.json', { transcriptDir });
      const config = resolveConfig({
        flags: {},
        env: { HOME: join(root, 'home') },
        processCwd: join(root, 'repo'),
      });
      expect(config.ignored.map((entry) => entry.field)).toEqual(['transcriptDir']);
      expect(config.transcriptDir.value).toBe(join(root, 'home', '.delegate', 'transcripts'));
    },
  );

  it("keeps an untrusted project's transcriptDir that stays inside it, also one not made yet", async () => {
    await write('repo/.delegate/settings.json', { transcriptDir: 'sub/new/logs' });
    const config = resolveConfig({
      flags: {},
      env: { HOME: join(root, 'home') },
      processCwd: join(root, 'repo'),
    });
    expect(config.ignored).toEqual([]);
    expect(config.transcriptDir.value).toBe(join(root, 'repo', 'sub', 'new', 'logs'));
  });

  it('reads ~/ in DELEGATE_TRANSCRIPT_DIR as the home folder', () => {
    const config = resolveConfig({
      flags: {},
      env: { HOME: join(root, 'home'), DELEGATE_TRANSCRIPT_DIR: '~/tx' },
      processCwd: join(root, 'repo'),
    });
    expect(config.transcriptDir).toMatchObject({ value: join(root, 'home', 'tx'), origin: 'env' });
  });

  it('reads the settings of a run from the home folder once, as the user settings', async () => {
    await write('home/.delegate/settings.json', { permissionMode: 'acceptEdits' });
    // A home folder that is a git repository (dotfiles) is the project root of its subfolders.
    await mkdir(join(root, 'home', '.git'));
    await mkdir(join(root, 'home', 'notes'));
    for (const cwd of [join(root, 'home'), join(root, 'home', 'notes')]) {
      const config = resolveConfig({
        flags: {},
        env: { HOME: join(root, 'home') },
        processCwd: cwd,
      });
      expect(config.ignored).toEqual([]);
      expect(config.permissionMode).toMatchObject({ value: 'acceptEdits', origin: 'user' });
    }
  });
});
