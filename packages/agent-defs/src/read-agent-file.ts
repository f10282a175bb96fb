import { open } from 'node:fs/promises';
import { type AgentSource } from '@delegate/core';
import { type ParseAgentResult } from './agent-diagnostic.js';
import { parseAgentFromMarkdown } from './parse-agent-from-markdown.js';

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

function failure(filePath: string, reason: string): ParseAgentResult {
  return { ok: false, diagnostic: { filePath, severity: 'error', reason } };
}

/** Reads and parses one agent Markdown file, refusing files over 1 MiB and files that are not UTF-8. */
export async function readAgentFile(options: ReadAgentFileOptions): Promise<ParseAgentResult> {
  const { filePath } = options;
  let bytes: Buffer;
  try {
    const handle = await open(filePath, 'r');
    try {
      const { size } = await handle.stat();
      if (size > MAX_AGENT_FILE_BYTES) {
        return failure(
          filePath,
          `file is ${size} bytes, over the ${MAX_AGENT_FILE_BYTES}-byte limit for agent files; shorten it`,
        );
      }
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    return failure(
      filePath,
      `could not be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // The file may have grown between stat and read.
  if (bytes.byteLength > MAX_AGENT_FILE_BYTES) {
    return failure(
      filePath,
      `file is over the ${MAX_AGENT_FILE_BYTES}-byte limit for agent files; shorten it`,
    );
  }
  let content: string;
  try {
    content = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return failure(filePath, 'is not valid UTF-8 text; save it as UTF-8');
  }
  return parseAgentFromMarkdown({ ...options, content });
}
