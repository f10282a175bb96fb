import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { AGENT_DIRECTORY_NAMES } from './agent-directory-names.js';
import { exists, findGitRoot, findMainCheckout, realPathOrSelf } from './find-git-root.js';

/** Options of {@link findProjectRoots} and {@link findProjectAgentDirectories}. */
export type FindProjectRootsOptions = {
  /**
   * Home directory, where the search stops: its agents are the user's, never the project's.
   * Default `os.homedir()` (none when that is not an absolute path).
   */
  homeDir?: string;
};

/** A project agents folder, and the folder its files may not resolve outside of. */
export type ProjectAgentDirectory = {
  /** The agents folder (`<dir>/.claude/agents`, `<dir>/.delegate/agents`). */
  path: string;
  /**
   * Where a symbolic link in it may lead: the repository root (the main checkout's for its
   * folders), or, outside a repository, the folder that holds this `.claude` or `.delegate`.
   */
  confineTo: string;
};

function homeOf(options: FindProjectRootsOptions): string | undefined {
  const home = options.homeDir ?? homedir();
  return isAbsolute(home) ? resolve(home) : undefined;
}

function isSameDirectory(left: string, right: string): boolean {
  return left === right || realPathOrSelf(left) === realPathOrSelf(right);
}

// The directories whose agents apply, nearest first, and the repository root they stop at.
function walkUp(
  cwd: string,
  options: FindProjectRootsOptions,
): { roots: string[]; gitRoot?: string } {
  const home = homeOf(options);
  const gitRoot = findGitRoot(cwd);
  const roots: string[] = [];
  for (let current = resolve(cwd); ; current = dirname(current)) {
    if (home !== undefined && isSameDirectory(current, home)) break;
    roots.push(current);
    if (current === gitRoot || dirname(current) === current) break;
  }
  return gitRoot === undefined ? { roots } : { roots, gitRoot };
}

/**
 * Returns the directories whose `.claude/agents` (and `.delegate/agents`) hold project agents
 * for `cwd`, as Claude Code searches them: from `cwd` up to the repository root (the nearest
 * ancestor holding `.git`), or, outside a repository, up to the file-system root; in both
 * cases stopping before the home directory, whose agents are the user's. Nearest first, and
 * the nearest wins: a file in `cwd`'s folder beats one of the same name in the root's.
 */
export async function findProjectRoots(
  cwd: string,
  options: FindProjectRootsOptions = {},
): Promise<string[]> {
  return walkUp(cwd, options).roots;
}

/**
 * Returns the project agents folders for `cwd` in the order they are read, so that a later one
 * wins a tie, as in Claude Code the folder nearest `cwd` does. In a linked git worktree whose
 * root has no agents folder of a name, the main checkout's folder of that name comes first, the
 * lowest level, as Claude Code adds it (agent files the main checkout does not commit still
 * apply in its worktrees). Then each of {@link findProjectRoots}, farthest first: its
 * `.claude/agents`, then its `.delegate/agents`.
 */
export async function findProjectAgentDirectories(
  cwd: string,
  options: FindProjectRootsOptions = {},
): Promise<ProjectAgentDirectory[]> {
  const { roots, gitRoot } = walkUp(cwd, options);
  const directories = roots
    .toReversed()
    .flatMap((root) =>
      AGENT_DIRECTORY_NAMES.map((name) => ({ path: join(root, name), confineTo: gitRoot ?? root })),
    );
  const main = gitRoot === undefined ? undefined : findMainCheckout(gitRoot);
  if (gitRoot === undefined || main === undefined) return directories;
  const fallback: ProjectAgentDirectory[] = [];
  for (const name of AGENT_DIRECTORY_NAMES) {
    const own = roots.includes(gitRoot) && exists(join(gitRoot, name));
    const path = join(main, name);
    if (!own && !directories.some((directory) => directory.path === path))
      fallback.push({ path, confineTo: main });
  }
  return [...fallback, ...directories];
}
