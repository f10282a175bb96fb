import { type Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';

/** Deepest directory level searched below an agents directory. */
export const MAX_AGENTS_DIRECTORY_DEPTH = 16;

/** Most `.md` files listed under one agents directory; the rest are skipped with a warning. */
export const MAX_AGENT_FILES_PER_DIRECTORY = 2000;

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

function isInside(root: string, path: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (!fromRoot.startsWith('..') && !isAbsolute(fromRoot));
}

/** Markdown files found under a directory, with the problems met on the way. */
export type MarkdownFileList = {
  /** Paths of `.md` files, sorted by path. */
  files: string[];
  /** Directories that exist but could not be read. */
  diagnostics: AgentDiagnostic[];
};

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function compareCodeUnits(left: string, right: string): number {
  if (left === right) return 0;
  return left < right ? -1 : 1;
}

/**
 * Lists `.md` files under `directory`, recursing into subdirectories (symbolic links are
 * followed once each, and only inside `confineTo` when it is given) and skipping names that
 * start with a dot; FIFOs, devices and sockets are never listed. At most
 * {@link MAX_AGENT_FILES_PER_DIRECTORY} files and {@link MAX_AGENT_SUBDIRECTORIES} directories
 * are taken. A missing directory gives
 * an empty list, not a diagnostic. The order is by path, so loading is deterministic.
 */
export async function listMarkdownFiles(
  directory: string,
  options: ListMarkdownFilesOptions = {},
): Promise<MarkdownFileList> {
  const files: string[] = [];
  const diagnostics: AgentDiagnostic[] = [];
  const visited = new Set<string>();
  let confinedRoot: string | undefined;
  if (options.confineTo !== undefined) {
    try {
      confinedRoot = await realpath(options.confineTo);
    } catch {
      confinedRoot = resolve(options.confineTo);
    }
  }
  const escapes = (path: string, real: string): boolean => {
    if (confinedRoot === undefined || isInside(confinedRoot, real)) return false;
    diagnostics.push({
      filePath: path,
      severity: 'warning',
      reason: `resolves to ${real}, outside ${confinedRoot}; skipped, because agents from a repository must stay inside it (a symbolic link there cannot pull in other files)`,
    });
    return true;
  };
  let truncated = false;
  const truncate = (reason: string): void => {
    if (truncated) return;
    truncated = true;
    diagnostics.push({ filePath: directory, severity: 'warning', reason });
  };

  const walk = async (current: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      const real = await realpath(current);
      if (visited.has(real) || escapes(current, real)) return;
      if (visited.size >= MAX_AGENT_SUBDIRECTORIES) {
        truncate(
          `holds more than ${MAX_AGENT_SUBDIRECTORIES} directories; the rest were not searched — keep agents directories small`,
        );
        return;
      }
      visited.add(real);
      entries = await readdir(current, { withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      diagnostics.push({
        filePath: current,
        severity: 'warning',
        reason: `agents directory could not be read: ${error instanceof Error ? error.message : String(error)}`,
      });
      return;
    }
    const subdirectories: string[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(current, entry.name);
      let isDirectory = entry.isDirectory();
      let isFile = entry.isFile();
      const isMarkdown = entry.name.toLowerCase().endsWith('.md');
      if (entry.isSymbolicLink()) {
        try {
          const target = await stat(path);
          isDirectory = target.isDirectory();
          isFile = target.isFile();
          if (isFile && isMarkdown && confinedRoot !== undefined) {
            if (escapes(path, await realpath(path))) continue;
          }
        } catch {
          continue; // A dangling link is not an agent.
        }
      }
      if (isFile && isMarkdown) {
        if (files.length >= MAX_AGENT_FILES_PER_DIRECTORY) {
          truncate(
            `holds more than ${MAX_AGENT_FILES_PER_DIRECTORY} agent files; the rest were skipped — keep agents directories small`,
          );
          continue;
        }
        files.push(path);
      } else if (isDirectory && depth < MAX_AGENTS_DIRECTORY_DEPTH) subdirectories.push(path);
    }
    await Promise.all(subdirectories.map((subdirectory) => walk(subdirectory, depth + 1)));
  };

  await walk(directory, 0);
  files.sort(compareCodeUnits);
  diagnostics.sort((left, right) => compareCodeUnits(left.filePath, right.filePath));
  return { files, diagnostics };
}
