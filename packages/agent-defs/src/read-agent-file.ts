import { AgentSource, invalidArgument } from '@delegate/core';
import { type ParseAgentResult } from './agent-diagnostic.js';
import { parseAgentFromMarkdown } from './parse-agent-from-markdown.js';
import { readConfinedFile } from './read-confined-file.js';
import { lineOfOffset } from './split-frontmatter.js';

/** Largest agent file read (1 MiB); bigger files get a diagnostic instead. */
export const MAX_AGENT_FILE_BYTES = 1024 * 1024;

/** Input of {@link readAgentFile}. */
export type ReadAgentFileOptions = {
  /** File to read. */
  filePath: string;
  /** Agents directory the file was found in. */
  baseDir: string;
  /** Source the file belongs to. */
  source: AgentSource;
  /** Plugin that supplied the file. */
  plugin?: string;
};

const strict = new TextDecoder('utf-8', { fatal: true });
// Claude Code reads agent files as UTF-8 the way Node does: bytes that are not UTF-8 become
// U+FFFD and the file still loads.
const lenient = new TextDecoder('utf-8');

function isUtf16(bytes: Uint8Array): boolean {
  return (bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff);
}

/** Reads and parses one agent file synchronously; see {@link readAgentFile}. */
export function readAgentFileSync(options: ReadAgentFileOptions): ParseAgentResult {
  const { filePath } = options;
  const read = readConfinedFile(filePath, { maxBytes: MAX_AGENT_FILE_BYTES });
  if (!read.ok) {
    return {
      ok: false,
      diagnostic: {
        filePath,
        severity: 'error',
        reason:
          read.code === 'too-large'
            ? `the file ${read.reason} for agent files; shorten it`
            : `the file ${read.reason}; agent files must be plain, readable files`,
      },
    };
  }
  if (isUtf16(read.bytes)) {
    return {
      ok: false,
      diagnostic: {
        filePath,
        severity: 'error',
        reason:
          'is UTF-16 text (it starts with a UTF-16 byte-order mark), which Claude Code cannot read as an agent; save it as UTF-8',
      },
    };
  }
  let content: string;
  let invalidLine: number | undefined;
  try {
    content = strict.decode(read.bytes);
  } catch {
    content = lenient.decode(read.bytes);
    invalidLine = lineOfOffset(content, content.indexOf('\ufffd'));
  }
  const result = parseAgentFromMarkdown({ ...options, content });
  if (invalidLine === undefined || !result.ok) return result;
  return {
    ...result,
    warnings: [
      {
        filePath,
        agentType: result.agent.agentType,
        line: invalidLine,
        severity: 'warning',
        reason: `line ${invalidLine} holds bytes that are not UTF-8 (the file was saved as Latin-1 or Windows-1252, say); they read as the replacement character \ufffd, as in Claude Code — save the file as UTF-8`,
      },
      ...result.warnings,
    ],
  };
}

function checkReadAgentFileOptions(options: unknown): asserts options is ReadAgentFileOptions {
  const fail = (option: string, expected: string, value: unknown): never => {
    throw invalidArgument({ where: 'readAgentFile()', option, expected, value });
  };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    fail('options', 'an object ({ filePath, baseDir, source })', options);
    return;
  }
  const fields = options as Record<string, unknown>;
  for (const option of ['filePath', 'baseDir'] as const) {
    const value = fields[option];
    if (typeof value !== 'string' || value.length === 0) {
      fail(`options.${option}`, 'a non-empty path', value);
    }
  }
  if (!AgentSource.safeParse(fields['source']).success) {
    fail(
      'options.source',
      `one of ${AgentSource.options.map((source) => `"${source}"`).join(', ')}`,
      fields['source'],
    );
  }
  if (fields['plugin'] !== undefined && typeof fields['plugin'] !== 'string') {
    fail('options.plugin', 'a string when set', fields['plugin']);
  }
}

/**
 * Reads and parses one agent Markdown file through the confined reader (regular files only,
 * a FIFO never blocks, at most {@link MAX_AGENT_FILE_BYTES}). Bytes that are not UTF-8 are
 * read as U+FFFD, as Claude Code reads them, with a warning naming the first such line; UTF-16
 * text is refused.
 * A problem with the file is a diagnostic in the result, never a rejection; wrong options
 * (a missing `filePath`, an unknown `source`) reject with a DelegateError (`INVALID_ARGUMENT`)
 * naming the option.
 */
export async function readAgentFile(options: ReadAgentFileOptions): Promise<ParseAgentResult> {
  checkReadAgentFileOptions(options);
  return readAgentFileSync(options);
}
