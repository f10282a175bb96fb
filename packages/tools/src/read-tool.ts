import { z } from 'zod';
import { DelegateError, TOOL_NAMES, type Tool, type ToolUseContext } from '@delegate/core';
import { hasSystemCode, withFileSystemErrors } from './file-system-error.js';
import { openConfinedFileWithStats, readAtMost } from './open-confined-file.js';
import { readLineRange } from './read-line-range.js';
import { resolveToolPath } from './resolve-path-within-roots.js';
import { findSimilarFileNames } from './similar-file-names.js';
import { splitLines } from './split-lines.js';
import { decodeTextFile, hashContent } from './text-file.js';

/** Input of the Read tool. */
export const ReadInput = z.object({
  file_path: z
    .string()
    .min(1)
    .describe('Path of the file to read: absolute, or relative to the working directory.'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based line number to start reading at. Use with limit for large files.'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Maximum number of lines to read, starting at offset.'),
});
export type ReadInput = z.infer<typeof ReadInput>;

/** Structured result of a Read call. */
export type ReadOutput = {
  /** Absolute path read. */
  filePath: string;
  /** First line shown, 1-based. */
  startLine: number;
  /** Number of lines shown. */
  numLines: number;
  /** Number of lines in the file. */
  totalLines: number;
};

/** Options of the Read tool. */
export type ReadToolOptions = {
  /** Files larger than this are refused unless offset or limit is given (default 256 KiB). */
  maxBytes?: number;
  /** Lines shown when no limit is given (default 2000). */
  defaultLineLimit?: number;
  /** Longer lines are cut to this many characters (default 2000). */
  maxLineLength?: number;
  /**
   * Read regular files that have more than one hard link (default false: refused with
   * PATH_ESCAPE, since another name of the file may lie outside the allowed directories).
   * pnpm's node_modules are hard links into its store, for example.
   */
  allowHardLinks?: boolean;
};

function formatLine(options: {
  lineNumber: number;
  /** The line, or (for a streamed range) its first `maxLineLength` characters. */
  line: string;
  /** Its length before it was cut. */
  length: number;
  maxLineLength: number;
}): string {
  const { line, length, maxLineLength } = options;
  const shown =
    length > maxLineLength
      ? `${line.slice(0, maxLineLength)}… [line truncated, ${length - maxLineLength} more characters]`
      : line;
  return `${String(options.lineNumber).padStart(6)}\t${shown}`;
}

async function notFound(absolutePath: string, realPath: string): Promise<DelegateError> {
  const similar = await findSimilarFileNames(realPath);
  const hint = similar.length > 0 ? ` Did you mean: ${similar.join(', ')}?` : '';
  return new DelegateError('NOT_FOUND', `File does not exist: ${absolutePath}.${hint}`, {
    details: { path: absolutePath, suggestions: similar },
  });
}

/** Creates the Read tool: reads a UTF-8 text file with line numbers and records it in the file-read cache. */
export function createReadTool(options: ReadToolOptions = {}): Tool<ReadInput, ReadOutput> {
  const defaultLineLimit = options.defaultLineLimit ?? 2000;
  const maxLineLength = options.maxLineLength ?? 2000;

  return {
    name: TOOL_NAMES.read,
    description: () =>
      'Reads a UTF-8 text file and returns its lines numbered from 1 (like `cat -n`). ' +
      `Give offset and limit to read part of a large file; without them at most ${defaultLineLimit} lines are shown ` +
      'and files over the size limit are refused. Binary files and directories are refused. ' +
      'A file must be read before Write or Edit may change it.',
    inputSchema: ReadInput,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    requiresUserInteraction: () => false,

    call(input: ReadInput, context: ToolUseContext) {
      return withFileSystemErrors(input.file_path, () => readFile(input, context));
    },
  };

  async function readFile(input: ReadInput, context: ToolUseContext) {
    const maxBytes = context.fileReadingLimits?.maxBytes ?? options.maxBytes ?? 256 * 1024;
    const lineLimit = context.fileReadingLimits?.maxLines ?? defaultLineLimit;
    const { absolutePath, realPath, root } = await resolveToolPath(input.file_path, context);
    let opened;
    try {
      opened = await openConfinedFileWithStats({
        realPath,
        root,
        purpose: 'read',
        ...(options.allowHardLinks === true ? { allowHardLinks: true } : {}),
      });
    } catch (error) {
      if (hasSystemCode(error, 'ENOENT')) throw await notFound(absolutePath, realPath);
      throw error;
    }
    const { handle, stats } = opened;
    const offset = input.offset ?? 1;
    const limit = input.limit ?? lineLimit;
    let selected: string[];
    let lengths: number[];
    let totalLines: number;
    let contentHash: string;
    let wholeText: string | undefined;
    try {
      const hasRange = input.offset !== undefined || input.limit !== undefined;
      if (!hasRange && stats.size > maxBytes) {
        throw new DelegateError(
          'LIMIT_EXCEEDED',
          `${absolutePath} is ${stats.size} bytes, over the ${maxBytes}-byte read limit. ` +
            'Read part of it with offset and limit, or search it with Grep.',
          { details: { path: absolutePath, size: stats.size, maxBytes } },
        );
      }
      if (stats.size > maxBytes) {
        // Only what the model is shown of each line is kept (the cache too holds that).
        const range = await readLineRange({
          path: realPath,
          handle,
          offset,
          limit,
          maxLineLength,
          signal: context.abortController.signal,
        });
        selected = range.lines;
        lengths = range.lineLengths;
        totalLines = range.totalLines;
        contentHash = range.contentHash;
      } else {
        const { bytes, truncated } = await readAtMost(handle, maxBytes, stats.size);
        if (truncated) {
          throw new DelegateError(
            'LIMIT_EXCEEDED',
            `${absolutePath} grew past the ${maxBytes}-byte read limit while it was being read. ` +
              'Read part of it with offset and limit, or search it with Grep.',
            { details: { path: absolutePath, maxBytes } },
          );
        }
        wholeText = decodeTextFile(bytes, absolutePath);
        const lines = splitLines(wholeText);
        selected = lines.slice(offset - 1, offset - 1 + limit);
        lengths = selected.map((line) => line.length);
        totalLines = lines.length;
        contentHash = hashContent(bytes);
      }
    } finally {
      await handle.close();
    }

    const isPartialView = offset > 1 || offset - 1 + selected.length < totalLines;
    context.readFileState.set(absolutePath, {
      content: isPartialView || wholeText === undefined ? selected.join('\n') : wholeText,
      timestamp: stats.mtimeMs,
      contentHash,
      ...(isPartialView ? { offset, limit, isPartialView: true } : {}),
    });

    const data: ReadOutput = {
      filePath: absolutePath,
      startLine: offset,
      numLines: selected.length,
      totalLines,
    };
    if (totalLines === 0) {
      return { content: `(${absolutePath} is empty)`, data };
    }
    if (selected.length === 0) {
      return {
        content: `(${absolutePath} has ${totalLines} lines; offset ${offset} is past the end.)`,
        data,
      };
    }
    const body = selected
      .map((line, index) =>
        formatLine({
          lineNumber: offset + index,
          line,
          length: lengths[index] ?? line.length,
          maxLineLength,
        }),
      )
      .join('\n');
    const lastShown = offset + selected.length - 1;
    const note =
      lastShown < totalLines
        ? `\n\n(Showing lines ${offset}-${lastShown} of ${totalLines}. Use offset and limit to read more.)`
        : '';
    return { content: body + note, data };
  }
}
