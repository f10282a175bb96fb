import { execFileSync } from 'node:child_process';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTempDirectory, removeTempDirectory } from './__fixtures__/test-context.js';
import { assessReadOnlyCommand, isReadOnlyCommand } from './read-only-command.js';
import { loadShellParser } from './shell-parser.js';

let base: string;
let root: string;
let outside: string;

beforeAll(() => loadShellParser());
beforeEach(async () => {
  base = await createTempDirectory();
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'src', 'a.txt'), 'inside\n');
  await writeFile(join(outside, 'secret.txt'), 'secret\n');
});
afterEach(() => removeTempDirectory(base));

/** A git repository at `path` with one empty commit. */
function initRepository(path: string): void {
  execFileSync('git', ['init', '-q', path]);
  execFileSync('git', [
    '-C',
    path,
    '-c',
    'user.email=a@b',
    '-c',
    'user.name=n',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'x',
  ]);
}

const assess = (command: string) => assessReadOnlyCommand({ command, cwd: root, roots: [root] });

describe('isReadOnlyCommand', () => {
  it('accepts pipelines of reading programs and refuses anything that writes or runs', () => {
    for (const command of [
      'ls -la',
      'cat a | wc -l',
      'git diff HEAD~1',
      'grep -rn foo src',
      'find . -name "*.ts"',
    ]) {
      expect({ command, readOnly: isReadOnlyCommand(command) }).toEqual({
        command,
        readOnly: true,
      });
    }
    for (const command of [
      'rm x',
      'cat a > b',
      'find . -delete',
      'find . $ACTION',
      'find . *',
      'git push',
      'git diff --output=x',
      'FOO=1 cat a',
      'env cat a',
      'cat $(rm x)',
      './ls',
      'ls | sh',
    ]) {
      expect({ command, readOnly: isReadOnlyCommand(command) }).toEqual({
        command,
        readOnly: false,
      });
    }
  });
});

describe('assessReadOnlyCommand', () => {
  it('lets reads inside the roots run without asking', () => {
    for (const command of [
      'ls',
      'ls src',
      'cat src/a.txt',
      'grep -rn inside src',
      'cat src/*.txt',
      'wc -l < src/a.txt',
      'head -n 5 src/a.txt',
    ]) {
      expect({ command, ...assess(command) }).toEqual({
        command,
        readOnly: true,
        insideRoots: true,
      });
    }
  });

  it('keeps reads of paths outside the roots from running without asking, naming the path', async () => {
    await symlink(outside, join(root, 'link'));
    await symlink(join(outside, 'secret.txt'), join(root, 'src', 'secret-link'));
    const cases = [
      `cat ${join(outside, 'secret.txt')}`,
      'cat ../outside/secret.txt',
      'cat link/secret.txt',
      'ls link',
      'cat src/*',
      'grep -r secret ..',
      'find .. -name secret.txt',
      `wc -l < ${join(outside, 'secret.txt')}`,
      `grep --file=${join(outside, 'secret.txt')} src/a.txt`,
      'cat ~/.ssh/id_rsa',
      'cat $HOME/.bashrc',
      'grep -R secret src',
      'find -L src',
      `echo $(cat ${join(outside, 'secret.txt')})`,
    ];
    for (const command of cases) {
      const result = assess(command);
      expect({ command, readOnly: result.readOnly, insideRoots: result.insideRoots }).toEqual({
        command,
        readOnly: true,
        insideRoots: false,
      });
      expect(result.reason).toBeTruthy();
    }
    expect(assess('cat link/secret.txt').reason).toContain(outside);
  });

  it('refuses a hard-linked file, whose other name may be outside the roots', async () => {
    await link(join(outside, 'secret.txt'), join(root, 'src', 'hard.txt'));
    const result = assess('cat src/hard.txt');
    expect(result.insideRoots).toBe(false);
    expect(result.reason).toContain('hard link');
  });

  it('refuses git when the repository reaches above the roots', async () => {
    execFileSync('git', ['init', '-q', base]);
    expect(assess('git status')).toMatchObject({ readOnly: true, insideRoots: false });
    execFileSync('git', ['init', '-q', root]);
    expect(assess('git status')).toEqual({ readOnly: true, insideRoots: true });
  });

  it('refuses git when a .git file or link inside the roots names a repository outside them', async () => {
    const other = join(outside, 'private');
    execFileSync('git', ['init', '-q', other]);
    // What an unpacked archive, or a Write, can leave in the working directory.
    await writeFile(join(root, '.git'), `gitdir: ${join(other, '.git')}\n`);
    const byFile = assess('git log -p');
    expect(byFile).toMatchObject({ readOnly: true, insideRoots: false });
    expect(byFile.reason).toContain(join(other, '.git'));
    await writeFile(join(root, '.git'), 'gitdir: ../outside/private/.git\n');
    expect(assess('git log -p')).toMatchObject({ insideRoots: false });
    execFileSync('rm', [join(root, '.git')]);
    await symlink(join(other, '.git'), join(root, '.git'));
    expect(assess('git show')).toMatchObject({ insideRoots: false });
  });

  it('lets git run in a linked worktree or a submodule of a repository outside the roots (an agent worktree)', async () => {
    const source = join(outside, 'private-src');
    initRepository(source);
    const main = join(outside, 'main');
    initRepository(main);
    const worktree = join(base, 'worktree');
    execFileSync('git', ['-C', main, 'worktree', 'add', '-q', worktree]);
    expect(
      assessReadOnlyCommand({ command: 'git status', cwd: worktree, roots: [worktree] }),
    ).toEqual({ readOnly: true, insideRoots: true });
    // A submodule reads the repository its superproject keeps for it.
    const sub = join(main, 'sub');
    execFileSync(
      'git',
      [
        '-C',
        main,
        '-c',
        'protocol.file.allow=always',
        'submodule',
        'add',
        '-q',
        join(outside, 'private-src'),
        'sub',
      ],
      {
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 'n',
          GIT_AUTHOR_EMAIL: 'a@b',
          GIT_COMMITTER_NAME: 'n',
          GIT_COMMITTER_EMAIL: 'a@b',
        },
      },
    );
    expect(assessReadOnlyCommand({ command: 'git log', cwd: sub, roots: [sub] })).toEqual({
      readOnly: true,
      insideRoots: true,
    });
    // Another folder claiming to be that worktree is not one.
    await writeFile(join(root, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'worktree')}\n`);
    expect(assess('git status')).toMatchObject({ insideRoots: false });
  });
});
