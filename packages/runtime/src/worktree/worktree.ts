import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DelegateError, errorMessage } from '@delegate/core';

const run = promisify(execFile);

async function git(cwd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run('git', args, { cwd, maxBuffer: 16 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new DelegateError(
      'TOOL_FAILED',
      `git ${args.join(' ')} failed in ${cwd}: ${stderr || errorMessage(error)}`,
      { cause: error },
    );
  }
}

/** A git worktree created for one agent. */
export type AgentWorktree = {
  /** Directory of the worktree. */
  worktreePath: string;
  /** Branch checked out in it. */
  worktreeBranch: string;
  /** Commit the branch started from. */
  headCommit: string;
  /** Top level of the repository it belongs to. */
  gitRoot: string;
  /** The directory in the worktree that matches the `cwd` it was made from (its root or a subdirectory). */
  cwd: string;
};

/** Default parent directory of agent worktrees: outside the repository, under the OS temp dir. */
export function defaultWorktreeRoot(gitRoot: string): string {
  const hash = createHash('sha256').update(gitRoot).digest('hex').slice(0, 8);
  return join(tmpdir(), 'delegate-worktrees', `${basename(gitRoot)}-${hash}`);
}

async function makeWorktreeRoot(root: string, given: boolean): Promise<void> {
  try {
    await mkdir(root, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const what = given
      ? "The worktree root (the session's worktreeRoot option)"
      : 'The worktree root';
    const reason =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'a file is in the way of that folder'
        : `it could not be made (${code ?? errorMessage(error)})`;
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${what} ${root} cannot hold agent worktrees: ${reason}. Remove the file, or set worktreeRoot to a folder.`,
      { cause: error, details: { option: 'worktreeRoot', path: root } },
    );
  }
}

/**
 * Creates a new worktree on a new branch `delegate/<slug>` from the current HEAD commit of
 * the repository that holds `cwd`. `slug` must start with a letter or digit and hold only
 * letters, digits, `-`, `_`, `%` and `+` (what `agentWorktreeSlug` makes), so it can be
 * neither a path escape nor a git option.
 * Uncommitted changes of that repository are not in the worktree (it starts from the
 * commit). Fails clearly when the repository has no commit yet, or when the path or
 * branch is already taken (nothing existing is overwritten).
 */
export async function createAgentWorktree(options: {
  cwd: string;
  slug: string;
  root?: string;
}): Promise<AgentWorktree> {
  if (!/^[A-Za-z0-9][A-Za-z0-9_%+-]{0,127}$/.test(options.slug)) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Worktree name "${options.slug.slice(0, 80)}" must start with a letter or digit and use letters, digits, "-", "_", "%" and "+" only (agentWorktreeSlug makes such names from any agent type).`,
    );
  }
  let gitRoot: string;
  try {
    gitRoot = await git(options.cwd, ['rev-parse', '--show-toplevel']);
  } catch (error) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `isolation "worktree" needs a git repository, and ${options.cwd} is not inside one. Run from inside a repository, or leave isolation out.`,
      { cause: error },
    );
  }
  let headCommit: string;
  try {
    headCommit = await git(gitRoot, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  } catch (error) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `isolation "worktree" starts from the current commit, and the repository at ${gitRoot} has no commits yet. Make a first commit, then try again.`,
      { cause: error },
    );
  }
  const root = resolve(options.cwd, options.root ?? defaultWorktreeRoot(gitRoot));
  await makeWorktreeRoot(root, options.root !== undefined);
  const worktreePath = join(root, options.slug);
  const worktreeBranch = `delegate/${options.slug}`;
  if (existsSync(worktreePath)) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Cannot create the worktree at ${worktreePath}: something is already there. Remove it (\`git worktree remove\` if it is a worktree) or pick another worktree root.`,
    );
  }
  const taken = await git(gitRoot, ['branch', '--list', '--', worktreeBranch]);
  if (taken.length > 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Cannot create the worktree branch ${worktreeBranch} in ${gitRoot}: a branch of that name exists (left by an earlier agent?). Delete it with \`git branch -D ${worktreeBranch}\` once its work is merged, then try again.`,
    );
  }
  await git(gitRoot, ['worktree', 'add', '-b', worktreeBranch, '--', worktreePath, headCommit]);
  // An agent started from a subdirectory works in the same subdirectory of its worktree.
  const inside = relative(await realpath(gitRoot), await realpath(options.cwd));
  const cwd =
    inside && !inside.startsWith('..') && !isAbsolute(inside)
      ? join(worktreePath, inside)
      : worktreePath;
  return { worktreePath, worktreeBranch, headCommit, gitRoot, cwd };
}

/** True when the worktree has uncommitted changes or commits beyond its start commit. */
export async function hasWorktreeChanges(
  worktree: Pick<AgentWorktree, 'worktreePath' | 'headCommit'>,
): Promise<boolean> {
  const status = await git(worktree.worktreePath, ['status', '--porcelain']);
  if (status.length > 0) return true;
  const ahead = await git(worktree.worktreePath, [
    'rev-list',
    '--count',
    `${worktree.headCommit}..HEAD`,
  ]);
  return Number(ahead) > 0;
}

/** Removes a worktree and its branch. */
export async function removeAgentWorktree(worktree: AgentWorktree): Promise<void> {
  await git(worktree.gitRoot, ['worktree', 'remove', '--force', '--', worktree.worktreePath]);
  await git(worktree.gitRoot, ['branch', '-D', '--', worktree.worktreeBranch]);
}

/**
 * Finishes an agent's worktree: removed when nothing changed (returns undefined), kept
 * and described when something did.
 */
export async function cleanupAgentWorktree(
  worktree: AgentWorktree,
): Promise<{ path: string; branch: string } | undefined> {
  if (await hasWorktreeChanges(worktree))
    return { path: worktree.worktreePath, branch: worktree.worktreeBranch };
  await removeAgentWorktree(worktree);
  return undefined;
}
