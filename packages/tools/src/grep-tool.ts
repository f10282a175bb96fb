import { lstat, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { z } from 'zod';
import {
  DelegateError,
  TOOL_NAMES,
  type Tool,
  type ToolUseContext,
  timerDelay,
} from '@delegate/core';
import { displayPath } from './display-path.js';
import { toFileSystemError } from './file-system-error.js';
import { compileGlob } from './glob-pattern.js';
import { mapWithConcurrency } from './map-with-concurrency.js';
import { openConfinedFileWithStats } from './open-confined-file.js';
import { findRequiredLiteral } from './required-literal.js';
import { resolveToolPath } from './resolve-path-within-roots.js';
import { type FileSearchResult, runRegexWorker } from './run-regex-worker.js';
import { type WalkedFile, walkFiles } from './walk-files.js';

/** Input of the Grep tool. */
export const GrepInput = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Regular expression to search for (JavaScript RegExp syntax).'),
  path: z
    .string()
    .optional()
    .describe('File or directory to search (default: the working directory).'),
  glob: z
    .string()
    .optional()
    .describe(
      'Only search files whose path matches this glob, such as "*.ts" or "src/**/*.{js,jsx}".',
    ),
  output_mode: z
    .enum(['files_with_matches', 'content', 'count'])
    .optional()
    .describe(
      'files_with_matches (default) lists matching files; content shows matching lines; count shows matches per file.',
    ),
  '-i': z.boolean().optional().describe('Case-insensitive search.'),
  '-n': z.boolean().optional().describe('Show line numbers in content mode (default true).'),
  '-A': z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Lines of context after each match (content mode).'),
  '-B': z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Lines of context before each match (content mode).'),
  '-C': z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Lines of context before and after each match (content mode).'),
  head_limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Return at most this many files, lines or counts (default 250).'),
});
export type GrepInput = z.infer<typeof GrepInput>;

/** Structured result of a Grep call. */
export type GrepOutput = {
  /** Output mode used. */
  mode: 'files_with_matches' | 'content' | 'count';
  /** Absolute paths of the files with matches that were returned. */
  filenames: string[];
  /** Number of files with at least one match. */
  numFiles: number;
  /** Number of matching lines (content and count modes). */
  numMatches: number;
  /** True when head_limit cut the output. */
  truncated: boolean;
};

/** Options of the Grep tool. */
export type GrepToolOptions = {
  /** Default for head_limit (default 250). */
  defaultHeadLimit?: number;
  /** Files read at the same time (default 64). */
  concurrency?: number;
  /** Files larger than this are skipped (default 10 MiB). */
  maxFileBytes?: number;
  /** Matching lines longer than this are cut in content mode (default 500). */
  maxLineLength?: number;
  /**
   * Longest a search may run (default 30000 ms); it then fails with LIMIT_EXCEEDED.
   * Bounds catastrophic regex backtracking, which nothing else can interrupt.
   */
  timeoutMs?: number;
  /**
   * Also search regular files with more than one hard link (default false: skipped, since
   * another name of the file may lie outside the allowed directories).
   */
  allowHardLinks?: boolean;
  /**
   * @deprecated Ignored: files are now read and searched in a worker thread (with
   * synchronous reads, which do not block the event loop there). Kept so existing
   * option objects still type-check.
   */
  fileReading?: 'async' | 'sync-slices';
};

type FileMatches = FileSearchResult & { file: WalkedFile };

function compilePattern(pattern: string, caseInsensitive: boolean): RegExp {
  try {
    return new RegExp(pattern, caseInsensitive ? 'i' : '');
  } catch (error) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Grep pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message}. ` +
        'Escape special characters such as ( [ { . * + ? with a backslash to match them literally.',
      { cause: error, details: { pattern } },
    );
  }
}

function truncateLine(line: string, maxLength: number): string {
  return line.length > maxLength
    ? `${line.slice(0, maxLength)}… [${line.length - maxLength} more characters]`
    : line;
}

/**
 * Refuses a file the caller named that a tree walk would skip quietly: one that cannot be
 * opened (`EACCES`), is not a regular file (a FIFO, socket or device), has other hard links
 * (unless allowed) or is over the size limit. The worker checks the file again when it reads it.
 */
async function assertSearchableFile(options: {
  absolutePath: string;
  realPath: string;
  root: string;
  allowHardLinks: boolean;
  maxFileBytes: number;
}): Promise<void> {
  const { absolutePath, maxFileBytes } = options;
  let stats;
  try {
    const opened = await openConfinedFileWithStats({
      realPath: options.realPath,
      root: options.root,
      purpose: 'read',
      allowHardLinks: options.allowHardLinks,
    });
    stats = opened.stats;
    await opened.handle.close();
  } catch (error) {
    throw toFileSystemError(error, absolutePath);
  }
  if (stats.size > maxFileBytes) {
    throw new DelegateError(
      'LIMIT_EXCEEDED',
      `${absolutePath} is ${stats.size} bytes, over the ${maxFileBytes}-byte limit of files Grep searches. ` +
        'Read a range of it with Read (offset, limit), or search it with Bash grep.',
      { details: { path: absolutePath, size: stats.size, maxBytes: maxFileBytes } },
    );
  }
}

/** Creates the Grep tool: a regex search over a tree that honours .gitignore and skips binary files. */
export function createGrepTool(options: GrepToolOptions = {}): Tool<GrepInput, GrepOutput> {
  const defaultHeadLimit = options.defaultHeadLimit ?? 250;
  const concurrency = options.concurrency ?? 64;
  const maxFileBytes = options.maxFileBytes ?? 10 * 1024 * 1024;
  const maxLineLength = options.maxLineLength ?? 500;
  const timeoutMs = timerDelay(options.timeoutMs ?? 30_000, 'createGrepTool: options.timeoutMs');

  return {
    name: TOOL_NAMES.grep,
    description: () =>
      'Searches file contents with a regular expression (JavaScript syntax). Honours .gitignore files (nested ones ' +
      'too) and skips .git, node_modules and binary files. output_mode files_with_matches (default) lists files ' +
      'newest first; content shows matching lines with line numbers and optional context (-A, -B, -C); count ' +
      'shows matching lines per file. Filter files with glob; cap output with head_limit.',
    inputSchema: GrepInput,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,

    async call(input: GrepInput, context: ToolUseContext) {
      const mode = input.output_mode ?? 'files_with_matches';
      const caseInsensitive = input['-i'] === true;
      const regex = compilePattern(input.pattern, caseInsensitive);
      const literal = caseInsensitive ? undefined : findRequiredLiteral(input.pattern);
      const headLimit = input.head_limit ?? defaultHeadLimit;
      const signal = context.abortController.signal;

      const target = await resolveToolPath(input.path ?? '.', context);
      const targetStats = await stat(target.realPath).catch(() => undefined);
      if (targetStats === undefined) {
        throw new DelegateError('NOT_FOUND', `Path does not exist: ${target.absolutePath}.`, {
          details: { path: target.absolutePath },
        });
      }
      let candidates: WalkedFile[];
      const confineTo = targetStats.isDirectory() ? target.realPath : target.root;
      if (targetStats.isDirectory()) {
        candidates = await walkFiles({ root: target.realPath, respectGitignore: true, signal });
      } else {
        await assertSearchableFile({
          ...target,
          allowHardLinks: options.allowHardLinks === true,
          maxFileBytes,
        });
        candidates = [{ path: target.realPath, relativePath: basename(target.realPath) }];
      }
      const globMatcher =
        input.glob === undefined ? undefined : compileGlob(input.glob, { matchBase: true });
      const toAbsolute = (file: WalkedFile): string =>
        targetStats.isDirectory()
          ? resolve(target.absolutePath, file.relativePath)
          : target.absolutePath;

      const before = input['-B'] ?? input['-C'] ?? 0;
      const after = input['-A'] ?? input['-C'] ?? 0;
      const found = await runRegexWorker({
        task: {
          kind: 'search-files',
          paths: candidates.map((file) => file.path),
          relativePaths: candidates.map((file) => file.relativePath),
          ...(globMatcher === undefined
            ? {}
            : { glob: { source: globMatcher.source, flags: globMatcher.flags } }),
          regex: { source: regex.source, flags: regex.flags },
          ...(literal === undefined ? {} : { literal }),
          mode,
          before,
          after,
          maxFileBytes,
          confineTo,
          allowHardLinks: options.allowHardLinks === true,
        },
        timeoutMs,
        signal,
        what: `Grep for ${JSON.stringify(input.pattern)}`,
      });
      const matches: FileMatches[] = found.flatMap((entry) => {
        const file = candidates[entry.index];
        return file === undefined ? [] : [{ ...entry, file }];
      });
      const show = (file: WalkedFile): string => displayPath(toAbsolute(file), context.cwd);

      switch (mode) {
        case 'files_with_matches': {
          const withTimes = await mapWithConcurrency(matches, concurrency, async (entry) => ({
            path: toAbsolute(entry.file),
            mtimeMs: (await lstat(entry.file.path).catch(() => undefined))?.mtimeMs ?? 0,
            shown: show(entry.file),
          }));
          withTimes.sort(
            (left, right) => right.mtimeMs - left.mtimeMs || left.path.localeCompare(right.path),
          );
          const kept = withTimes.slice(0, headLimit);
          const truncated = kept.length < withTimes.length;
          const data: GrepOutput = {
            mode,
            filenames: kept.map((entry) => entry.path),
            numFiles: withTimes.length,
            numMatches: 0,
            truncated,
          };
          if (kept.length === 0) return { content: 'No files found.', data };
          const header = `Found ${withTimes.length} file${withTimes.length === 1 ? '' : 's'}`;
          const note = truncated
            ? `\n(Showing the ${kept.length} newest; raise head_limit or narrow path or glob.)`
            : '';
          return {
            content: `${header}\n${kept.map((entry) => entry.shown).join('\n')}${note}`,
            data,
          };
        }
        case 'count': {
          matches.sort((left, right) =>
            left.file.relativePath.localeCompare(right.file.relativePath),
          );
          const kept = matches.slice(0, headLimit);
          const truncated = kept.length < matches.length;
          const numMatches = matches.reduce((sum, entry) => sum + entry.matchedLines.length, 0);
          const data: GrepOutput = {
            mode,
            filenames: kept.map((entry) => toAbsolute(entry.file)),
            numFiles: matches.length,
            numMatches,
            truncated,
          };
          if (kept.length === 0) return { content: 'No matches found.', data };
          const lines = kept.map((entry) => `${show(entry.file)}:${entry.matchedLines.length}`);
          lines.push(
            `\nFound ${numMatches} matching line${numMatches === 1 ? '' : 's'} in ${matches.length} file${matches.length === 1 ? '' : 's'}.` +
              (truncated ? ` (Showing ${kept.length} files; raise head_limit to see more.)` : ''),
          );
          return { content: lines.join('\n'), data };
        }
        case 'content': {
          matches.sort((left, right) =>
            left.file.relativePath.localeCompare(right.file.relativePath),
          );
          const withNumbers = input['-n'] ?? true;
          const out: string[] = [];
          let truncated = false;
          const filenames: string[] = [];
          let numMatches = 0;
          for (const entry of matches) {
            numMatches += entry.matchedLines.length;
            if (truncated) continue;
            filenames.push(toAbsolute(entry.file));
            const shown = show(entry.file);
            const matched = new Set(entry.matchedLines);
            let lastPrinted = -2;
            for (const lineIndex of entry.matchedLines) {
              const from = Math.max(0, lineIndex - before, lastPrinted + 1);
              const to = Math.min(entry.lineCount - 1, lineIndex + after);
              if (from > lastPrinted + 1 && lastPrinted >= 0 && (before > 0 || after > 0))
                out.push('--');
              for (let index = from; index <= to; index++) {
                if (out.length >= headLimit) {
                  truncated = true;
                  break;
                }
                const separator = matched.has(index) ? ':' : '-';
                const number = withNumbers ? `${index + 1}${separator}` : '';
                out.push(
                  `${shown}${separator}${number}${truncateLine(entry.lines[index] ?? '', maxLineLength)}`,
                );
                lastPrinted = index;
              }
              if (truncated) break;
            }
          }
          const data: GrepOutput = {
            mode,
            filenames,
            numFiles: matches.length,
            numMatches,
            truncated,
          };
          if (out.length === 0) return { content: 'No matches found.', data };
          if (truncated)
            out.push(
              `(Output cut at ${headLimit} lines; raise head_limit or narrow path or glob.)`,
            );
          return { content: out.join('\n'), data };
        }
      }
    },
  };
}
