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

  it('checks words that start with - but are no options, and every word after --', async () => {
    // A folder named `-` inside the root (Write('-/x') makes one) leads out with `..`.
    await mkdir(join(root, '-'));
    const escape = '-/../../outside/secret.txt';
    expect(execFileSync('cat', ['--', escape], { cwd: root, encoding: 'utf8' })).toBe('secret\n');
    // A link named like an option, to a file outside.
    await symlink(join(outside, 'secret.txt'), join(root, '-.txt'));
    for (const command of [
      `cat -- ${escape}`,
      `grep -r -- secret ${escape}`,
      `head -n 1 -- ${escape}`,
      `cat ${escape}`,
      'cat -- -.txt',
      'wc -l -- -.txt',
    ]) {
      const assessment = assess(command);
      expect({ command, insideRoots: assessment.insideRoots }).toEqual({
        command,
        insideRoots: false,
      });
      expect(assessment.reason).toContain('outside the allowed directories');
    }
    // Options and operands that stay inside are still fine.
    for (const command of [
      'head -5 src/a.txt',
      'cat -- src/a.txt',
      'ls -1 -- -',
      'tail -n1 -- -/x',
    ]) {
      expect({ command, ...assess(command) }).toEqual({
        command,
        readOnly: true,
        insideRoots: true,
      });
    }
  });

  it('refuses words bash expands to other paths: braces, $"…", tildes, undecoded $\'…\'', () => {
    const secret = join(outside, 'secret.txt');
    const cases = [
      `cat {src/a.txt,${secret}}`,
      'head -2 {,/etc/passwd}',
      'cat src/{a.txt,../../outside/secret.txt}',
      'cat src/{a..c}.txt',
      `cat {src/a.txt,"${secret}"}`,
      'wc -l < {/etc/passwd,}',
      `cat $"${secret}"`,
      `cat src/$"a.txt"`,
      'head -3 x=~/etc/passwd',
      `cat x=src:~/${secret}`,
      `grep --file=~/secret src/a.txt`,
      'cat ~',
      'cat ~root/.bashrc',
      "cat $'\\u2215etc/passwd'",
      "cat $'src/a.txt\\0'",
      "cat $'\\cAsrc'",
    ];
    for (const command of cases) {
      const result = assess(command);
      expect({ command, insideRoots: result.insideRoots }).toEqual({ command, insideRoots: false });
      expect(result.reason).toBeTruthy();
    }
    for (const command of [
      'find {.,/root} -name id_rsa',
      'find . {-delete,}',
      `git diff --no-index {src/a.txt,/etc/passwd} src/a.txt`,
      'git log {--output=/tmp/x,}',
    ]) {
      expect({ command, ...assess(command) }).toMatchObject({
        command,
        readOnly: false,
        insideRoots: false,
      });
    }
  });

  it('keeps quoted and escaped braces and ordinary tildes literal', () => {
    for (const command of [
      'cat "src/{a,b}.txt"',
      "cat 'src/{a..c}'",
      'cat src/\\{a,b\\}',
      'grep -rn "x=~/y" src',
      'cat src/a.txt~',
      'echo {a,b} ~',
      "cat $'src/a.txt'",
    ]) {
      expect({ command, ...assess(command) }).toEqual({
        command,
        readOnly: true,
        insideRoots: true,
      });
    }
  });

  it('applies .. after a symbolic link where the kernel does, beside the link target', async () => {
    await mkdir(join(outside, 'sub'));
    // A link as a cloned repository can ship it.
    await symlink(join(outside, 'sub'), join(root, 'lnk'));
    await mkdir(join(root, 'src', 'deep'));
    await symlink(join(root, 'src', 'deep'), join(root, 'inner'));
    for (const command of [
      'cat lnk/../secret.txt',
      'grep -r secret lnk/..',
      'ls lnk/..',
      'cat lnk/../*',
      'cat lnk/./../secret.txt',
      'wc -l < lnk/../secret.txt',
      'cat inner/../../../outside/secret.txt',
      'cat missing/../src/a.txt',
    ]) {
      const result = assess(command);
      expect({ command, insideRoots: result.insideRoots }).toEqual({ command, insideRoots: false });
    }
    expect(assess('cat lnk/../secret.txt').reason).toContain(outside);
    // `inner/..` is src, beside the link's target: inside.
    for (const command of ['cat inner/../a.txt', 'cat src/../src/a.txt', 'ls inner/..']) {
      expect({ command, ...assess(command) }).toEqual({
        command,
        readOnly: true,
        insideRoots: true,
      });
    }
  });

  it('lists the folder bash lists for a glob after a link and .., and counts .. in .*', async () => {
    await mkdir(join(root, 'src', 'sub'));
    await symlink(join(root, 'src', 'sub'), join(root, 'to-sub'));
    // `to-sub/..` is src (inside), where a link leads out; the lexical reading is the root.
    await symlink(join(outside, 'secret.txt'), join(root, 'src', 'leak'));
    const listed = assess('cat to-sub/../*');
    expect(listed.insideRoots).toBe(false);
    expect(listed.reason).toContain('leak');
    expect(assess('cat .*')).toMatchObject({ insideRoots: false });
    expect(assess('cat src/sub/.*')).toEqual({ readOnly: true, insideRoots: true });
    expect(assess('cat .git*')).toEqual({ readOnly: true, insideRoots: true });
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
