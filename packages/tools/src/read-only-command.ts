import { existsSync, lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  analyzeShellCommandSync,
  type ShellAnalysis,
  type ShellCommand,
} from './analyze-shell-command.js';
import { physicalPathSync } from './physical-path.js';
import { isPathInside } from './resolve-path-within-roots.js';
import { isShellParserLoaded } from './shell-parser.js';
import type { ShellWord } from './shell-word.js';

type ReadOnlyProgram = {
  /** Its arguments name files or directories it reads (checked against the roots). */
  readsPaths: boolean;
  /** Why a call writes or runs something, if it does. */
  writes?: (args: readonly ShellWord[]) => string | undefined;
  /** True when a call follows symbolic links while walking a tree. */
  followsLinks?: (args: readonly ShellWord[]) => boolean;
};

const findWritingActions = /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/;

const readOnlyGitCommands = new Set([
  'status',
  'log',
  'diff',
  'show',
  'blame',
  'rev-parse',
  'ls-files',
]);

function anyUnknown(args: readonly ShellWord[]): ShellWord | undefined {
  return args.find((word) => word.value === undefined || word.mayExpand);
}

function shortClusterHas(args: readonly ShellWord[], letter: string, long: string): boolean {
  return args.some((word) => {
    const value = word.value ?? '';
    if (value === long || value.startsWith(`${long}=`)) return true;
    return /^-[A-Za-z]+$/.test(value) && value.includes(letter);
  });
}

const programs: Record<string, ReadOnlyProgram> = {
  cat: { readsPaths: true },
  cut: { readsPaths: true },
  df: { readsPaths: true },
  du: { readsPaths: true, followsLinks: (args) => shortClusterHas(args, 'L', '--dereference') },
  echo: { readsPaths: false },
  grep: {
    readsPaths: true,
    followsLinks: (args) => shortClusterHas(args, 'R', '--dereference-recursive'),
  },
  head: { readsPaths: true },
  ls: { readsPaths: true, followsLinks: (args) => shortClusterHas(args, 'L', '--dereference') },
  pwd: { readsPaths: false },
  stat: { readsPaths: true },
  tail: { readsPaths: true },
  uname: { readsPaths: false },
  wc: { readsPaths: true },
  which: { readsPaths: false },
  whoami: { readsPaths: false },
  find: {
    readsPaths: true,
    writes: (args) => {
      const unknown = anyUnknown(args);
      if (unknown)
        return `find gets ${unknown.text}, which could expand to an action such as -delete`;
      const action = args.find((word) => findWritingActions.test(word.value ?? ''));
      return action ? `find ${action.value} runs or writes` : undefined;
    },
    followsLinks: (args) => args.some((word) => word.value === '-L' || word.value === '-follow'),
  },
  git: {
    readsPaths: true,
    writes: (args) => {
      const subcommand = args[0]?.value ?? '';
      if (!readOnlyGitCommands.has(subcommand))
        return `git ${subcommand} is not a read-only git command`;
      const unknown = anyUnknown(args);
      if (unknown)
        return `git gets ${unknown.text}, which could expand to an option such as --output`;
      const option = args.find((word) => /^--(output|ext-diff)(=|$)/.test(word.value ?? ''));
      return option ? `git ${option.value} writes or runs a program` : undefined;
    },
  },
};

/** Why a command is not read-only, or undefined when it is. */
function whyNotReadOnly(command: ShellCommand): string | undefined {
  if (command.assignments.length > 0) {
    return `${command.program} runs with variables set (${command.assignments.join(' ')}), which can change what it runs`;
  }
  const program = command.program.includes('/') ? undefined : programs[command.program];
  if (program === undefined) return `${command.program} is not on the read-only list`;
  return program.writes?.(command.args);
}

function whyLineNotReadOnly(analysis: ShellAnalysis): string | undefined {
  if (analysis.opaque)
    return `the line cannot be fully analysed: ${analysis.opaqueReasons.join('; ')}`;
  const written = analysis.writtenFiles[0];
  if (written) return `the line writes ${written.text} by redirection`;
  if (analysis.commands.length === 0) return 'the line runs no command';
  for (const command of analysis.commands) {
    const reason = whyNotReadOnly(command);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * True when a Bash command line only reads: every command it would run (each part of a
 * pipeline or chain, each `$(…)`) is an allow-listed reading program — `cat`, `cut`,
 * `df`, `du`, `echo`, `grep`, `head`, `ls`, `pwd`, `stat`, `tail`, `uname`, `wc`, `which`,
 * `whoami`, `find` without actions that run or write, `git status|log|diff|show|blame|
 * rev-parse|ls-files` without `--output`/`--ext-diff` — with no variable assignment and no
 * redirection that writes a file. Returns false while the bash parser is not loaded
 * (`loadShellParser()`), and for anything the analysis cannot see through.
 */
export function isReadOnlyCommand(command: string): boolean {
  if (!isShellParserLoaded()) return false;
  return whyLineNotReadOnly(analyzeShellCommandSync(command)) === undefined;
}

/** What `assessReadOnlyCommand` decided. */
export type ReadOnlyCommandAssessment = {
  /** The line only reads (`isReadOnlyCommand`). */
  readOnly: boolean;
  /** It only reads, and every path it names resolves inside the roots (safe to run without asking). */
  insideRoots: boolean;
  /** Why it is not read-only, or which path keeps it from being inside the roots. */
  reason?: string;
};

const maxGlobEntries = 10_000;

/** Where `path` leads from the real folder `base` (`/` by default), following links and `..` as the kernel does. */
function realPathSync(path: string, base = '/'): string {
  return physicalPathSync({ base, path });
}

type PathCheck = { realCwd: string; realRoots: string[] };

/**
 * Why a path keeps the line from running without asking, or undefined when it is fine.
 * A relative path starts at `base` (a real folder; the working directory by default).
 */
function whyPathOutside(path: string, check: PathCheck, base = check.realCwd): string | undefined {
  let real: string;
  try {
    real = realPathSync(path, base);
  } catch (error) {
    return `${path} cannot be resolved (${(error as Error).message})`;
  }
  if (!check.realRoots.some((root) => isPathInside(real, root))) {
    return `${path} resolves to ${real}, outside the allowed directories ${check.realRoots.join(', ')}`;
  }
  try {
    const stats = statSync(real);
    if (stats.isFile() && stats.nlink > 1) {
      return `${path} has ${stats.nlink} hard links, and another of its names may lie outside the allowed directories`;
    }
  } catch {
    // A missing file reads nothing.
  }
  return undefined;
}

/**
 * True when a glob's last component could match `..`: it starts with a literal dot (bash
 * never matches a leading dot otherwise) and, reading `[…]` as any one character, fits.
 */
function mayMatchDotDot(component: string): boolean {
  if (!component.startsWith('.')) return false;
  const source = component.replace(/\[[^\]]*\]|[*?[]|[^*?[]+/g, (piece) => {
    if (piece === '*') return '.*';
    if (piece === '?' || piece.startsWith('[')) return '.';
    return piece.replace(/[.+^${}()|\\\]]/g, '\\$&');
  });
  return new RegExp(`^${source}$`, 's').test('..');
}

function whyGlobOutside(pattern: string, check: PathCheck): string | undefined {
  const slash = pattern.lastIndexOf('/');
  const directory = slash === -1 ? '.' : pattern.slice(0, slash) || '/';
  if (/[*?[{]/.test(directory) || /[{]/.test(pattern)) {
    return `${pattern} expands over several directories, which is not checked before it runs`;
  }
  const outside = whyPathOutside(directory, check);
  if (outside !== undefined) return outside;
  // The folder bash lists: `dir/..` after a link is beside the link's target.
  let realDirectory: string;
  let entries: string[];
  try {
    realDirectory = realPathSync(directory, check.realCwd);
    entries = readdirSync(realDirectory);
  } catch {
    return undefined;
  }
  if (entries.length > maxGlobEntries) {
    return `${pattern} expands over more than ${maxGlobEntries} entries`;
  }
  // `.*` matches `..` too in bash without `globskipdots` (before 5.2, or turned off).
  if (mayMatchDotDot(pattern.slice(slash + 1))) entries.push('..');
  // Every entry, matching or not: a superset of what the glob can expand to.
  for (const entry of entries) {
    const reason = whyPathOutside(entry, check, realDirectory);
    if (reason !== undefined) return `${pattern} can expand to ${entry}: ${reason}`;
  }
  return undefined;
}

/**
 * The paths an argument may name: the word itself (a program may take any word as a file:
 * after `--` every word is one, and `-/x` or `-.` are no options), plus the value of
 * `--opt=value` and the tail of `-fVALUE`. `-` (standard input) and `--` name none.
 */
function pathsOfArgument(value: string): string[] {
  if (value === '-' || value === '--') return [];
  const paths = [value];
  if (value.startsWith('--')) {
    if (value.includes('=')) paths.push(value.slice(value.indexOf('=') + 1));
  } else if (value.startsWith('-')) {
    const tail = /^-[A-Za-z]+(.*)$/s.exec(value)?.[1] ?? '';
    if (tail !== '') paths.push(tail);
  }
  return paths.filter((path) => path !== '');
}

function whyArgumentOutside(word: ShellWord, check: PathCheck): string | undefined {
  if (word.value === undefined) {
    return `${word.text} is only known when the command runs (bash expands it)`;
  }
  for (const path of pathsOfArgument(word.value)) {
    if (path.startsWith('~'))
      return `${word.text} starts with ~, which is not resolved before it runs`;
    const reason = word.mayExpand ? whyGlobOutside(path, check) : whyPathOutside(path, check);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function gitTopLevel(realCwd: string): string | undefined {
  for (let directory = realCwd; ; directory = dirname(directory)) {
    if (existsSync(join(directory, '.git'))) return directory;
    if (dirname(directory) === directory) return undefined;
  }
}

const maxGitFileBytes = 4_096;

/** The `gitdir:` a `.git` file names, resolved from the folder holding it. */
function gitFileTarget(dotGit: string): string | undefined {
  const text = readFileSync(dotGit, 'utf8').slice(0, maxGitFileBytes);
  const named = /^gitdir: *(.+?)\s*$/m.exec(text)?.[1];
  return named === undefined ? undefined : realPathSync(named, dirname(dotGit));
}

/**
 * True when `gitDirectory` is the administrative folder of a linked worktree
 * (`<repository>/.git/worktrees/<name>`) registered for the worktree whose `.git` file is
 * `dotGit`: git records that file's path in the folder's own `gitdir` file.
 */
function isWorktreeOf(gitDirectory: string, dotGit: string): boolean {
  try {
    const back = readFileSync(join(gitDirectory, 'gitdir'), 'utf8').slice(0, maxGitFileBytes);
    return realPathSync(back.trim(), gitDirectory) === realPathSync(dotGit);
  } catch {
    return false;
  }
}

/**
 * True when `gitDirectory` is a submodule's repository (`<superproject>/.git/modules/<name>`)
 * whose configured work tree (`core.worktree`) is `top`.
 */
function isSubmoduleOf(gitDirectory: string, top: string): boolean {
  try {
    const config = readFileSync(join(gitDirectory, 'config'), 'utf8').slice(0, 65_536);
    const worktree = /^\s*worktree\s*=\s*(.+?)\s*$/m.exec(config)?.[1];
    return worktree !== undefined && realPathSync(worktree, gitDirectory) === realPathSync(top);
  } catch {
    return false;
  }
}

/**
 * Why the repository git would read from `top` lies outside the roots: its `.git` is a link
 * to a folder outside, or a `.git` file names one (`gitdir: …`) that is not the folder git
 * keeps for this very work tree (a linked worktree's, or a submodule's). A linked worktree
 * (an agent's) and a submodule may read their repository wherever it is.
 */
function whyGitDirectoryOutside(top: string, check: PathCheck): string | undefined {
  const dotGit = join(top, '.git');
  let gitDirectory: string;
  try {
    if (lstatSync(dotGit).isFile()) {
      const target = gitFileTarget(dotGit);
      if (target === undefined) return `${dotGit} is a file that names no gitdir`;
      gitDirectory = realPathSync(target);
      if (isWorktreeOf(gitDirectory, dotGit) || isSubmoduleOf(gitDirectory, top)) return undefined;
    } else {
      gitDirectory = realPathSync(dotGit);
    }
  } catch (error) {
    return `${dotGit} cannot be resolved (${(error as Error).message})`;
  }
  if (check.realRoots.some((root) => isPathInside(gitDirectory, root))) return undefined;
  return `git reads the repository at ${gitDirectory} (named by ${dotGit}), outside the allowed directories`;
}

function whyCommandOutside(command: ShellCommand, check: PathCheck): string | undefined {
  const program = programs[command.program];
  if (program === undefined || !program.readsPaths) return undefined;
  if (program.followsLinks?.(command.args) === true) {
    return `${command.program} follows symbolic links while it walks, which is not checked before it runs`;
  }
  if (command.program === 'git') {
    const top = gitTopLevel(check.realCwd);
    if (top !== undefined && !check.realRoots.some((root) => isPathInside(top, root))) {
      return `git reads the repository at ${top}, outside the allowed directories`;
    }
    const outside = top === undefined ? undefined : whyGitDirectoryOutside(top, check);
    if (outside !== undefined) return outside;
  }
  const args = command.program === 'git' ? command.args.slice(1) : command.args;
  for (const word of args) {
    const reason = whyArgumentOutside(word, check);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * Decides whether a Bash line may run without asking because it only reads inside the
 * allowed directories: it must be read-only (`isReadOnlyCommand`), and every path it
 * names — arguments, `--opt=path` values, input redirections, glob expansions — must
 * resolve inside one of `roots` as the kernel resolves it (links followed, `..` applied
 * after them), with no regular file that has other hard links. Recursive reads that follow
 * links (`grep -R`, `find -L`, `du -L`, `ls -L`), words bash expands (`~`, `x=~/p`,
 * `{a,b}`, `$"…"`) and arguments only known at run time are never inside. git also
 * needs its repository's top folder inside the roots, and the repository its `.git` names
 * (a link, or a `gitdir:` file) too, unless that is a linked worktree's own. The parser
 * must be loaded.
 */
export function assessReadOnlyCommand(options: {
  command: string;
  cwd: string;
  roots: readonly string[];
}): ReadOnlyCommandAssessment {
  if (!isShellParserLoaded()) {
    return { readOnly: false, insideRoots: false, reason: 'the bash parser is not loaded' };
  }
  const analysis = analyzeShellCommandSync(options.command);
  const notReadOnly = whyLineNotReadOnly(analysis);
  if (notReadOnly !== undefined)
    return { readOnly: false, insideRoots: false, reason: notReadOnly };
  const cwd = resolve(options.cwd);
  let realCwd: string;
  try {
    // Bash is started in options.cwd as the kernel resolves it.
    realCwd = realPathSync(options.cwd, realPathSync(process.cwd()));
  } catch (error) {
    return {
      readOnly: true,
      insideRoots: false,
      reason: `${cwd} cannot be resolved (${(error as Error).message})`,
    };
  }
  const realRoots = options.roots.flatMap((root) => {
    try {
      return [realPathSync(resolve(cwd, root))];
    } catch {
      return [];
    }
  });
  const check: PathCheck = { realCwd, realRoots };
  // Commands without path arguments (`ls`, `find`, `du`) read the working directory.
  if (!realRoots.some((root) => isPathInside(realCwd, root))) {
    return {
      readOnly: true,
      insideRoots: false,
      reason: `the working directory ${realCwd} is outside the allowed directories`,
    };
  }
  for (const command of analysis.commands) {
    const reason = whyCommandOutside(command, check);
    if (reason !== undefined) return { readOnly: true, insideRoots: false, reason };
  }
  for (const word of analysis.readFiles) {
    const reason = whyArgumentOutside(word, check);
    if (reason !== undefined) return { readOnly: true, insideRoots: false, reason };
  }
  return { readOnly: true, insideRoots: true };
}
