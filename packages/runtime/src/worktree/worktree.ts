import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
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
  /**
   * Ignored entries (`git status --ignored` lines) the checkout itself made, before the agent
   * ran (a `post-checkout` hook's output): they are not the agent's changes.
   */
  ignoredAtStart?: string[];
};

/** `git status --porcelain --ignored` of the worktree, one entry a line. */
async function statusLines(worktreePath: string): Promise<string[]> {
  const status = await git(worktreePath, ['status', '--porcelain', '--ignored']);
  return status.split('\n').filter((line) => line.length > 0);
}

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
  const worktree: AgentWorktree = { worktreePath, worktreeBranch, headCommit, gitRoot, cwd };
  if (!(await isDirectory(cwd))) await refuseMissingFolder(worktree, options.cwd);
  const ignoredAtStart = (await statusLines(worktreePath)).filter((line) => line.startsWith('!! '));
  return ignoredAtStart.length > 0 ? { ...worktree, ignoredAtStart } : worktree;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The folder the agent was started in is not in the commit (it is new, or holds only
 * untracked or ignored files): the worktree just made is removed again, and the spawn is
 * refused, rather than leaving the agent in a folder that does not exist.
 */
async function refuseMissingFolder(worktree: AgentWorktree, cwd: string): Promise<never> {
  await removeAgentWorktree(worktree).catch(() => undefined);
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `isolation "worktree" starts from the current commit, and the folder ${cwd} is not in it (it is new, or holds only untracked or ignored files), so the agent's worktree would have no such folder. Commit the folder first, start the agent from a folder the commit has, or leave isolation out.`,
    { details: { cwd, gitRoot: worktree.gitRoot, headCommit: worktree.headCommit } },
  );
}

/**
 * True when the worktree has uncommitted changes or commits beyond its start commit. Files
 * that `.gitignore` ignores count too (a build output, a report, a `.env`, an installed
 * `node_modules`): a worktree starts from a commit, which has none, so the agent made them;
 * only those the checkout itself made (`ignoredAtStart`) do not count.
 */
export async function hasWorktreeChanges(
  worktree: Pick<AgentWorktree, 'worktreePath' | 'headCommit' | 'ignoredAtStart'>,
): Promise<boolean> {
  const atStart = new Set(worktree.ignoredAtStart);
  const lines = await statusLines(worktree.worktreePath);
  if (lines.some((line) => !atStart.has(line))) return true;
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

/**
 * The subdirectory of its worktree the agent works in (`''` for the root); undefined when
 * `cwd` is not inside `worktreePath` (metadata that does not hold together).
 */
export function worktreeSubdirectory(
  worktree: Pick<AgentWorktree, 'worktreePath' | 'cwd'>,
): string | undefined {
  const inside = relative(worktree.worktreePath, worktree.cwd);
  if (inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) return undefined;
  return inside;
}

/**
 * The folder of the checkout the worktree was made from that matches the agent's cwd (its
 * repository's top level, or the same subdirectory): where a fresh worktree for the same
 * agent is made from. Undefined when the worktree's fields do not hold together.
 */
export function worktreeSourceCwd(
  worktree: Pick<AgentWorktree, 'worktreePath' | 'cwd' | 'gitRoot'>,
): string | undefined {
  const inside = worktreeSubdirectory(worktree);
  return inside === undefined ? undefined : join(worktree.gitRoot, inside);
}

/** One entry of `git worktree list --porcelain`. */
type ListedWorktree = { path: string; branch?: string };

function parseWorktreeList(listing: string): ListedWorktree[] {
  const entries: ListedWorktree[] = [];
  for (const block of listing.split(/\n\s*\n/)) {
    let entry: ListedWorktree | undefined;
    for (const line of block.split('\n')) {
      if (line.startsWith('worktree ')) entry = { path: line.slice('worktree '.length) };
      else if (entry && line.startsWith('branch ')) entry.branch = line.slice('branch '.length);
    }
    if (entry) entries.push(entry);
  }
  return entries;
}

async function realPathOf(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

/** What {@link findAgentWorktree} found where an agent's metadata says its worktree is. */
export type FoundWorktree =
  | {
      /** It is there: the agent goes on in it. */
      status: 'found';
      worktree: AgentWorktree;
    }
  | {
      /** Nothing is at its path any more (it was removed). */
      status: 'gone';
    }
  | {
      /** Something is there that is not that worktree (`reason` says what). */
      status: 'unusable';
      reason: string;
    };

/**
 * Checks a worktree recorded in an agent's transcript metadata (untrusted input) against git
 * before an agent works in it again: `found` when its path is a linked worktree (never the
 * main checkout) of the repository that holds `sourceCwd`, with its branch checked out; the
 * result has that repository's top level and real paths, and no `ignoredAtStart` (a
 * transcript's word does not decide what may be deleted). `gone` when nothing is at its
 * path, `unusable` with the reason otherwise.
 */
export async function findAgentWorktree(options: {
  recorded: AgentWorktree;
  sourceCwd: string;
}): Promise<FoundWorktree> {
  const { recorded } = options;
  const wanted = await realPathOf(recorded.worktreePath);
  if (wanted === undefined) return { status: 'gone' };
  let gitRoot: string;
  let listing: string;
  try {
    gitRoot = await git(options.sourceCwd, ['rev-parse', '--show-toplevel']);
    listing = await git(gitRoot, ['worktree', 'list', '--porcelain']);
  } catch (error) {
    return { status: 'unusable', reason: errorMessage(error) };
  }
  // The first entry is the main checkout, which is never an agent's worktree.
  let match: ListedWorktree | undefined;
  for (const entry of parseWorktreeList(listing).slice(1)) {
    if ((await realPathOf(entry.path)) === wanted) match = entry;
  }
  if (!match)
    return {
      status: 'unusable',
      reason: `${recorded.worktreePath} is not a worktree of the repository at ${gitRoot}`,
    };
  if (match.branch !== `refs/heads/${recorded.worktreeBranch}`)
    return {
      status: 'unusable',
      reason: `the worktree at ${recorded.worktreePath} has ${match.branch ? `branch ${match.branch.replace(/^refs\/heads\//, '')}` : 'no branch'} checked out, not ${recorded.worktreeBranch}`,
    };
  const folder = await realPathOf(join(wanted, worktreeSubdirectory(recorded) ?? ''));
  // The agent removed its own folder (or a link now leads out of the worktree): it goes on
  // at the worktree's root.
  const inside =
    folder !== undefined &&
    worktreeSubdirectory({ worktreePath: wanted, cwd: folder }) !== undefined &&
    (await isDirectory(folder));
  const cwd = inside ? folder : wanted;
  return {
    status: 'found',
    worktree: {
      worktreePath: wanted,
      worktreeBranch: recorded.worktreeBranch,
      headCommit: recorded.headCommit,
      gitRoot,
      cwd,
    },
  };
}
