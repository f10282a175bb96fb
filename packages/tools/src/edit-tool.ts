import { z } from 'zod';
import { DelegateError, TOOL_NAMES, type Tool, type ToolUseContext } from '@delegate/core';
import { checkCurrentFile } from './file-freshness.js';
import { withFileSystemErrors } from './file-system-error.js';
import { openConfinedFileWithStats } from './open-confined-file.js';
import { resolveToolPath } from './resolve-path-within-roots.js';
import { decodeTextFile, hashContent } from './text-file.js';

/** Input of the Edit tool. */
export const EditInput = z.object({
  file_path: z
    .string()
    .min(1)
    .describe('Path of the file to edit: absolute, or relative to the working directory.'),
  old_string: z
    .string()
    .min(1)
    .describe('Exact text to replace; must occur once unless replace_all is true.'),
  new_string: z.string().describe('Text to put in its place (must differ from old_string).'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence instead of exactly one (default false).'),
});
export type EditInput = z.infer<typeof EditInput>;

/** Structured result of an Edit call. */
export type EditOutput = {
  /** Absolute path edited. */
  filePath: string;
  /** Number of occurrences replaced. */
  replacements: number;
};

const snippetContextLines = 3;

function countOccurrences(text: string, search: string): number {
  let count = 0;
  let index = text.indexOf(search);
  while (index !== -1) {
    count++;
    index = text.indexOf(search, index + search.length);
  }
  return count;
}

function buildSnippet(text: string, changeStart: number, changeLength: number): string {
  const lines = text.split(/\r?\n/);
  // A final line break ends the last line; it does not start another.
  if (text.endsWith('\n')) lines.pop();
  const firstLine = text.slice(0, changeStart).split('\n').length;
  const lastLine =
    firstLine + text.slice(changeStart, changeStart + changeLength).split('\n').length - 1;
  const from = Math.max(1, firstLine - snippetContextLines);
  const to = Math.min(lines.length, lastLine + snippetContextLines);
  const shown: string[] = [];
  for (let lineNumber = from; lineNumber <= to; lineNumber++) {
    shown.push(`${String(lineNumber).padStart(6)}\t${lines[lineNumber - 1] ?? ''}`);
  }
  return shown.join('\n');
}

/** Creates the Edit tool: exact string replacement in a file that was read and has not changed since. */
export function createEditTool(): Tool<EditInput, EditOutput> {
  return {
    name: TOOL_NAMES.edit,
    description: () =>
      'Replaces an exact string in a file. old_string must match the file exactly (whitespace included) and ' +
      'occur exactly once, unless replace_all is true. The file must have been read with Read first and must not ' +
      'have changed since.',
    inputSchema: EditInput,
    isReadOnly: () => false,
    isConcurrencySafe: () => false,
    requiresUserInteraction: () => false,

    call(input: EditInput, context: ToolUseContext) {
      return withFileSystemErrors(input.file_path, () => editFile(input, context));
    },
  };
}

async function editFile(input: EditInput, context: ToolUseContext) {
  if (input.old_string === input.new_string) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Edit refused for ${input.file_path}: old_string and new_string are identical, so nothing would change.`,
      { details: { path: input.file_path } },
    );
  }
  const { absolutePath, realPath, root } = await resolveToolPath(input.file_path, context);
  const current = await checkCurrentFile({
    realPath,
    root,
    absolutePath,
    cache: context.readFileState,
    toolName: TOOL_NAMES.edit,
    load: true,
  });
  if (current?.bytes === undefined) {
    throw new DelegateError(
      'NOT_FOUND',
      `File does not exist: ${absolutePath}. Use Write to create a new file.`,
      { details: { path: absolutePath } },
    );
  }
  const { bytes } = current;
  const text = decodeTextFile(bytes, absolutePath);

  let oldString = input.old_string;
  let newString = input.new_string;
  let count = countOccurrences(text, oldString);
  // Models write LF; a CRLF file would otherwise never match a multi-line old_string.
  if (
    count === 0 &&
    text.includes('\r\n') &&
    oldString.includes('\n') &&
    !oldString.includes('\r\n')
  ) {
    oldString = oldString.replace(/\n/g, '\r\n');
    newString = newString.replace(/\n/g, '\r\n');
    count = countOccurrences(text, oldString);
  }
  // A file whose lines all end in CRLF keeps them: new lines of new_string get CRLF too.
  if (text.includes('\r\n') && !/(?<!\r)\n/.test(text)) {
    newString = newString.replace(/(?<!\r)\n/g, '\r\n');
  }
  if (count === 0) {
    throw new DelegateError(
      'TOOL_FAILED',
      `Edit failed: old_string was not found in ${absolutePath}. Read the file again and copy the text exactly, ` +
        'including whitespace and indentation.',
      { details: { path: absolutePath } },
    );
  }
  if (count > 1 && input.replace_all !== true) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `Edit refused: old_string occurs ${count} times in ${absolutePath}. Add surrounding lines to make it ` +
        'unique, or set replace_all to true to replace every occurrence.',
      { details: { path: absolutePath, occurrences: count } },
    );
  }

  const firstIndex = text.indexOf(oldString);
  const updated =
    input.replace_all === true
      ? text.split(oldString).join(newString)
      : text.replace(oldString, () => newString);
  const hadBom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  const previous = context.readFileState.get(absolutePath);
  const { handle } = await openConfinedFileWithStats({ realPath, root, purpose: 'write' });
  let stats;
  try {
    await handle.truncate(0);
    await handle.writeFile(hadBom ? `\ufeff${updated}` : updated, 'utf8');
    stats = await handle.stat();
  } finally {
    await handle.close();
  }
  context.readFileState.set(absolutePath, {
    content: updated,
    timestamp: stats.mtimeMs,
    contentHash: hashContent(hadBom ? `\ufeff${updated}` : updated),
    // An edit does not show the model the rest of a partly read file.
    ...(previous?.isPartialView === true
      ? { offset: previous.offset, limit: previous.limit, isPartialView: true }
      : {}),
  });
  const snippet = buildSnippet(updated, firstIndex, newString.length);
  const what = count === 1 ? '1 occurrence' : `${count} occurrences`;
  return {
    content: `Edited ${absolutePath}: replaced ${what}. Around the ${count === 1 ? 'change' : 'first change'}:\n${snippet}`,
    data: { filePath: absolutePath, replacements: count },
  };
}
