import { readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';

/** Deepest folder level searched below an agents directory; deeper folders get a warning. */
export const MAX_AGENTS_DIRECTORY_DEPTH = 16;

/** Most `.md` files listed under one agents directory; the rest are skipped with one warning. */
export const MAX_AGENT_FILES_PER_DIRECTORY = 10_000;

/** Most directories walked under one agents directory; the rest are skipped with a warning. */
export const MAX_AGENT_SUBDIRECTORIES = 2000;

/** Options of {@link listMarkdownFiles}. */
export type ListMarkdownFilesOptions = {
  /**
   * Directory nothing may resolve outside of: a directory or file whose real path (symbolic
   * links resolved) leaves it is skipped with a warning and never read.
   */
  confineTo?: string;
};

/** Markdown files found under a directory, with the problems met on the way. */
export type MarkdownFileList = {
  /** Paths of `.md` files, sorted by path. */
  files: string[];
  /**
   * Directories that could not be read, links that leave the confining directory, `*.md`
   * entries that are not files (a FIFO, a socket, a device, a link that dangles or loops),
   * caps reached.
   */
  diagnostics: AgentDiagnostic[];
};

function isInside(root: string, path: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot));
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function compareCodeUnits(left: string, right: string): number {
  if (left === right) return 0;
  return left < right ? -1 : 1;
}

type Walk = {
  root: string;
  confinedRoot: string | undefined;
  files: string[];
  diagnostics: AgentDiagnostic[];
  visited: Set<string>;
  tooDeep: string[];
  truncated: boolean;
  /** The file cap was passed: every entry still to come sorts after the files kept. */
  stopped: boolean;
};

function escapes(walk: Walk, path: string, real: string): boolean {
  if (walk.confinedRoot === undefined || isInside(walk.confinedRoot, real)) return false;
  walk.diagnostics.push({
    filePath: path,
    severity: 'warning',
    reason: `resolves to ${real}, outside ${walk.confinedRoot}; skipped, because agents from a repository must stay inside it (a symbolic link there cannot pull in other files)`,
  });
  return true;
}

function truncate(walk: Walk, reason: string): void {
  if (walk.truncated) return;
  walk.truncated = true;
  walk.diagnostics.push({ filePath: walk.root, severity: 'warning', reason });
}

function readEntries(walk: Walk, current: string): Dirent[] | undefined {
  try {
    const real = realpathSync(current);
    if (walk.visited.has(real) || escapes(walk, current, real)) return undefined;
    if (walk.visited.size >= MAX_AGENT_SUBDIRECTORIES) {
      truncate(
        walk,
        `holds more than ${MAX_AGENT_SUBDIRECTORIES} directories; the rest were not searched — keep agents directories small`,
      );
      return undefined;
    }
    walk.visited.add(real);
    return readdirSync(current, { withFileTypes: true });
  } catch (error) {
    if (isMissing(error)) return undefined;
    walk.diagnostics.push({
      filePath: current,
      severity: 'warning',
      reason: `agents directory could not be read (${(error as { code?: string }).code ?? 'error'}); check its permissions`,
    });
    return undefined;
  }
}

/** What a file-system entry that is neither a file nor a directory is, for a diagnostic. */
function describeSpecial(entry: {
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (entry.isFIFO()) return 'a named pipe (FIFO)';
  if (entry.isSocket()) return 'a socket';
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'a device';
  return 'neither a file nor a directory';
}

type Kind = 'file' | 'directory' | { skipped: string } | undefined;

// What a directory entry is, following a symbolic link (once, and only inside the confinement).
// An entry that is neither a file nor a directory says why it is skipped.
function classify(walk: Walk, entry: Dirent, path: string): Kind {
  if (!entry.isSymbolicLink()) {
    if (entry.isDirectory()) return 'directory';
    return entry.isFile() ? 'file' : { skipped: `is ${describeSpecial(entry)}` };
  }
  try {
    const target = statSync(path);
    if (target.isDirectory()) return 'directory';
    if (!target.isFile()) return { skipped: `is a symbolic link to ${describeSpecial(target)}` };
    return walk.confinedRoot !== undefined && escapes(walk, path, realpathSync(path))
      ? undefined
      : 'file';
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ELOOP') return { skipped: 'is a symbolic link that loops back on itself' };
    if (isMissing(error)) return { skipped: 'is a symbolic link to a file that does not exist' };
    return {
      skipped: `is a symbolic link that could not be followed (${String(code ?? 'error')})`,
    };
  }
}

type Entry = { entry: Dirent; path: string; kind: Kind; key: string };

// A folder's entries in the order their paths sort: a directory sorts as its name followed by
// the separator, since every path under it starts so (`a.md` comes before `a/b.md`, and
// `a-b.md` before both). Walking in this order lists files already sorted by path.
function sortedEntries(walk: Walk, current: string, entries: readonly Dirent[]): Entry[] {
  return entries
    .map((entry) => {
      const path = join(current, entry.name);
      const kind = classify(walk, entry, path);
      return { entry, path, kind, key: kind === 'directory' ? `${entry.name}${sep}` : entry.name };
    })
    .sort((left, right) => compareCodeUnits(left.key, right.key));
}

function addFile(walk: Walk, path: string): void {
  if (walk.files.length < MAX_AGENT_FILES_PER_DIRECTORY) {
    walk.files.push(path);
    return;
  }
  // Every file still to come sorts after this one, so nothing more can be kept.
  truncate(
    walk,
    `holds more than ${MAX_AGENT_FILES_PER_DIRECTORY} agent files; the first ${MAX_AGENT_FILES_PER_DIRECTORY} in sorted path order were read and the rest skipped, starting with ${path} — keep agents directories small`,
  );
  walk.stopped = true;
}

function walkDirectory(walk: Walk, current: string, depth: number): void {
  const entries = readEntries(walk, current);
  if (entries === undefined) return;
  for (const { entry, path, kind } of sortedEntries(walk, current, entries)) {
    if (walk.stopped) return;
    if (typeof kind === 'object') {
      // Only an entry that would have been an agent file is worth a word.
      if (entry.name.endsWith('.md'))
        walk.diagnostics.push({
          filePath: path,
          severity: 'warning',
          reason: `${kind.skipped}, not an agent file; skipped`,
        });
    } else if (kind === 'file' && entry.name.endsWith('.md')) {
      addFile(walk, path);
    } else if (kind === 'directory') {
      if (depth < MAX_AGENTS_DIRECTORY_DEPTH) walkDirectory(walk, path, depth + 1);
      else walk.tooDeep.push(path);
    }
  }
}

/**
 * Lists `.md` files (the suffix in lower case, as Claude Code requires) under `directory`,
 * recursing into subdirectories, hidden ones included, as Claude Code does. Symbolic links
 * are followed once each, and only inside `confineTo` when it is given; FIFOs, devices and
 * sockets are never listed (nor opened), and one named `*.md` gets a warning, as does a
 * `*.md` link that dangles or loops. At most {@link MAX_AGENT_FILES_PER_DIRECTORY} files and
 * {@link MAX_AGENT_SUBDIRECTORIES} directories are taken, {@link MAX_AGENTS_DIRECTORY_DEPTH}
 * levels deep; each limit reached gets one warning. A missing directory gives an empty list.
 * Each folder's entries are sorted before they are walked, so files are found in sorted path
 * order and the files kept when a limit is reached are the first ones by path, whatever order
 * the file system lists them in. Only one folder's entries per level are held at a time, and
 * the walk stops at the first file past the limit.
 */
export function listMarkdownFiles(
  directory: string,
  options: ListMarkdownFilesOptions = {},
): MarkdownFileList {
  let confinedRoot: string | undefined;
  if (options.confineTo !== undefined) {
    try {
      confinedRoot = realpathSync(options.confineTo);
    } catch {
      confinedRoot = resolve(options.confineTo);
    }
  }
  const walk: Walk = {
    root: directory,
    confinedRoot,
    files: [],
    diagnostics: [],
    visited: new Set(),
    tooDeep: [],
    truncated: false,
    stopped: false,
  };
  walkDirectory(walk, directory, 0);
  if (walk.tooDeep.length > 0) {
    walk.tooDeep.sort(compareCodeUnits);
    walk.diagnostics.push({
      filePath: walk.tooDeep[0] ?? directory,
      severity: 'warning',
      reason: `${walk.tooDeep.length} folder(s) more than ${MAX_AGENTS_DIRECTORY_DEPTH} levels below ${directory} were not searched, this one first; Claude Code reads agent files there — move them into a shallower folder`,
    });
  }
  walk.diagnostics.sort((left, right) => compareCodeUnits(left.filePath, right.filePath));
  return { files: walk.files, diagnostics: walk.diagnostics };
}
