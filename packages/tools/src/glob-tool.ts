import { lstat, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  DelegateError,
  TOOL_NAMES,
  type Tool,
  type ToolUseContext,
  timerDelay,
} from '@delegate/core';
import { displayPath } from './display-path.js';
import { compileGlob, splitGlobBase } from './glob-pattern.js';
import { mapWithConcurrency } from './map-with-concurrency.js';
import { resolveToolPath } from './resolve-path-within-roots.js';
import { runRegexWorker } from './run-regex-worker.js';
import { DEFAULT_SKIPPED_DIRECTORIES, walkFiles } from './walk-files.js';

/** Input of the Glob tool. */
export const GlobInput = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('Glob to match file paths against, such as "**/*.ts" or "src/**/*.{js,jsx}".'),
  path: z
    .string()
    .optional()
    .describe(
      'Directory to search in (default: the working directory). Omit it rather than passing "undefined".',
    ),
});
export type GlobInput = z.infer<typeof GlobInput>;

/** Structured result of a Glob call. */
export type GlobOutput = {
  /** Absolute paths, newest first. */
  filenames: string[];
  /** Number of files that matched (before the cap). */
  numFiles: number;
  /** True when more files matched than were returned. */
  truncated: boolean;
};

/** Options of the Glob tool. */
export type GlobToolOptions = {
  /** Most paths returned (default 100). */
  maxResults?: number;
  /** Longest the pattern may take to match the walked paths (default 30000 ms); then LIMIT_EXCEEDED. */
  timeoutMs?: number;
};

async function assertDirectory(realPath: string, absolutePath: string): Promise<void> {
  const stats = await stat(realPath).catch(() => undefined);
  if (stats === undefined) {
    throw new DelegateError('NOT_FOUND', `Directory does not exist: ${absolutePath}.`, {
      details: { path: absolutePath },
    });
  }
  if (!stats.isDirectory()) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${absolutePath} is a file, not a directory; Glob searches directories.`,
      {
        details: { path: absolutePath },
      },
    );
  }
}

/** Creates the Glob tool: finds files by glob pattern, newest first, skipping node_modules and .git. */
export function createGlobTool(options: GlobToolOptions = {}): Tool<GlobInput, GlobOutput> {
  const maxResults = options.maxResults ?? 100;
  const timeoutMs = timerDelay(options.timeoutMs ?? 30_000, 'createGlobTool: options.timeoutMs');
  return {
    name: TOOL_NAMES.glob,
    description: () =>
      'Finds files whose path matches a glob pattern (`**` spans directories; `*`, `?`, `{a,b}` and `[a-z]` stay ' +
      `within one). Returns paths sorted by modification time, newest first, at most ${maxResults}. ` +
      'node_modules and .git are skipped unless the pattern names them.',
    inputSchema: GlobInput,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,

    async call(input: GlobInput, context: ToolUseContext) {
      const searchRoot = await resolveToolPath(input.path ?? '.', context);
      // Checked before the pattern's base is added: `path` itself must be a directory.
      await assertDirectory(searchRoot.realPath, searchRoot.absolutePath);
      const { base, rest } = splitGlobBase(input.pattern);
      const start =
        base === ''
          ? searchRoot
          : await resolveToolPath(resolve(searchRoot.absolutePath, base), context);
      await assertDirectory(start.realPath, start.absolutePath);

      const matcher = compileGlob(rest);
      const skipDirectoryNames = new Set(
        [...DEFAULT_SKIPPED_DIRECTORIES].filter((name) => !input.pattern.includes(name)),
      );
      const restSegments = rest.split('/');
      const maxDirectoryDepth = rest.includes('**') ? Infinity : restSegments.length - 1;
      const files = await walkFiles({
        root: start.realPath,
        skipDirectoryNames,
        signal: context.abortController.signal,
        shouldEnterDirectory: (relativePath) => relativePath.split('/').length <= maxDirectoryDepth,
      });
      // Several wildcards in one segment can backtrack for ages on a long name: match off the main thread.
      const kept = await runRegexWorker({
        task: {
          kind: 'filter-paths',
          regex: { source: matcher.source, flags: matcher.flags },
          paths: files.map((file) => file.relativePath),
        },
        timeoutMs,
        signal: context.abortController.signal,
        what: `Glob ${JSON.stringify(input.pattern)}`,
      });
      const matched = kept.flatMap((index) => {
        const file = files[index];
        return file === undefined ? [] : [file];
      });
      const withTimes = await mapWithConcurrency(matched, 64, async (file) => {
        const stats = await lstat(file.path).catch(() => undefined);
        return {
          path: resolve(start.absolutePath, file.relativePath),
          mtimeMs: stats?.mtimeMs ?? 0,
        };
      });
      withTimes.sort(
        (left, right) => right.mtimeMs - left.mtimeMs || left.path.localeCompare(right.path),
      );
      const shown = withTimes.slice(0, maxResults).map((entry) => entry.path);
      const truncated = withTimes.length > shown.length;
      const data: GlobOutput = { filenames: shown, numFiles: withTimes.length, truncated };
      if (shown.length === 0) {
        return { content: `No files match ${input.pattern} in ${start.absolutePath}.`, data };
      }
      const lines = shown.map((path) => displayPath(path, context.cwd));
      if (truncated) {
        lines.push(
          `(Showing ${shown.length} of ${withTimes.length} matches, newest first. Use a narrower path or pattern to see the rest.)`,
        );
      }
      return { content: lines.join('\n'), data };
    },
  };
}
