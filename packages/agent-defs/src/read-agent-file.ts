import { type AgentSource } from '@delegate/core';
import { type ParseAgentResult } from './agent-diagnostic.js';
import { parseAgentFromMarkdown } from './parse-agent-from-markdown.js';
import { readConfinedFile } from './read-confined-file.js';

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

const decoder = new TextDecoder('utf-8', { fatal: true });

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
  let content: string;
  try {
    content = decoder.decode(read.bytes);
  } catch {
    return {
      ok: false,
      diagnostic: {
        filePath,
        severity: 'error',
        reason: 'is not valid UTF-8 text; save it as UTF-8',
      },
    };
  }
  return parseAgentFromMarkdown({ ...options, content });
}

/**
 * Reads and parses one agent Markdown file through the confined reader (regular files only,
 * a FIFO never blocks, at most {@link MAX_AGENT_FILE_BYTES}), refusing text that is not UTF-8.
 * Never rejects.
 */
export async function readAgentFile(options: ReadAgentFileOptions): Promise<ParseAgentResult> {
  return readAgentFileSync(options);
}
