import { type Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type AgentDiagnostic } from './agent-diagnostic.js';

/** Deepest directory level searched below an agents directory. */
export const MAX_AGENTS_DIRECTORY_DEPTH = 16;

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
 * followed once each) and skipping names that start with a dot. A missing directory gives
 * an empty list, not a diagnostic. The order is by path, so loading is deterministic.
 */
export async function listMarkdownFiles(directory: string): Promise<MarkdownFileList> {
  const files: string[] = [];
  const diagnostics: AgentDiagnostic[] = [];
  const visited = new Set<string>();

  const walk = async (current: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      const real = await realpath(current);
      if (visited.has(real)) return;
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
      if (entry.isSymbolicLink()) {
        try {
          const target = await stat(path);
          isDirectory = target.isDirectory();
          isFile = target.isFile();
        } catch {
          continue; // A dangling link is not an agent.
        }
      }
      if (isFile && entry.name.toLowerCase().endsWith('.md')) files.push(path);
      else if (isDirectory && depth < MAX_AGENTS_DIRECTORY_DEPTH) subdirectories.push(path);
    }
    await Promise.all(subdirectories.map((subdirectory) => walk(subdirectory, depth + 1)));
  };

  await walk(directory, 0);
  files.sort(compareCodeUnits);
  diagnostics.sort((left, right) => compareCodeUnits(left.filePath, right.filePath));
  return { files, diagnostics };
}
