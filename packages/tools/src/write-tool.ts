import { resolve } from 'node:path';
import { z } from 'zod';
import { DelegateError, TOOL_NAMES, type Tool, type ToolUseContext } from '@delegate/core';
import { checkCurrentFile } from './file-freshness.js';
import { hasSystemCode, withFileSystemErrors } from './file-system-error.js';
import { openConfinedFileWithStats } from './open-confined-file.js';
import { resolveToolPath } from './resolve-path-within-roots.js';
import { splitLines } from './split-lines.js';
import { hashContent } from './text-file.js';

/** Input of the Write tool. */
export const WriteInput = z.object({
  file_path: z
    .string()
    .min(1)
    .describe('Path of the file to write: absolute, or relative to the working directory.'),
  content: z.string().describe('The complete new content of the file.'),
});
export type WriteInput = z.infer<typeof WriteInput>;

/** Structured result of a Write call. */
export type WriteOutput = {
  /** Absolute path written. */
  filePath: string;
  /** True when the file did not exist before. */
  created: boolean;
  /** Bytes written. */
  bytes: number;
};

/** Creates the Write tool: writes a whole file, refusing to overwrite one that was not read or changed since. */
export function createWriteTool(): Tool<WriteInput, WriteOutput> {
  return {
    name: TOOL_NAMES.write,
    description: () =>
      'Writes a whole file, creating missing parent directories. An existing file must have been read with Read ' +
      'first and must not have changed since; prefer Edit for changing part of a file.',
    inputSchema: WriteInput,
    isReadOnly: () => false,
    isConcurrencySafe: () => false,
    requiresUserInteraction: () => false,

    call(input: WriteInput, context: ToolUseContext) {
      return withFileSystemErrors(input.file_path, () => writeFile(input, context));
    },
  };
}

async function writeFile(input: WriteInput, context: ToolUseContext) {
  // `path.resolve` drops a trailing slash, which would turn `dir/` into a file named `dir`.
  if (input.file_path.endsWith('/')) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Write refused: ${resolve(context.cwd, input.file_path)}/ ends with /, which names a directory; Write writes files. ` +
        'Give the path of a file (dir/name.ext); missing parent directories are created.',
      { details: { path: input.file_path } },
    );
  }
  const { absolutePath, realPath, root } = await resolveToolPath(input.file_path, context);
  const current = await checkCurrentFile({
    realPath,
    root,
    absolutePath,
    cache: context.readFileState,
    toolName: TOOL_NAMES.write,
    requireFullRead: true,
  });
  let handle;
  try {
    // A new file's missing parent directories are made inside the root by the open.
    ({ handle } = await openConfinedFileWithStats({
      realPath,
      root,
      purpose: current === undefined ? 'create' : 'write',
    }));
  } catch (error) {
    const appeared = hasSystemCode(error, 'EEXIST');
    if (appeared || hasSystemCode(error, 'ENOENT')) {
      throw new DelegateError(
        'FILE_STALE',
        `Write refused: ${absolutePath} was ${appeared ? 'created' : 'removed'} by something else while it was being written. ` +
          'Read it, then retry.',
        {
          cause: error,
          details: {
            path: absolutePath,
            tool: TOOL_NAMES.write,
            reason: appeared ? 'created' : 'removed',
          },
        },
      );
    }
    throw error;
  }
  let stats;
  try {
    await handle.truncate(0);
    await handle.writeFile(input.content, 'utf8');
    stats = await handle.stat();
  } finally {
    await handle.close();
  }
  context.readFileState.set(absolutePath, {
    content: input.content,
    timestamp: stats.mtimeMs,
    contentHash: hashContent(input.content),
  });
  const lineCount = splitLines(input.content).length;
  const created = current === undefined;
  return {
    content: `${created ? 'Created' : 'Overwrote'} ${absolutePath} (${lineCount} lines).`,
    data: { filePath: absolutePath, created, bytes: Buffer.byteLength(input.content) },
  };
}
