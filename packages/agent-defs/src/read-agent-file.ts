import { constants } from 'node:fs';
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

/**
 * Reads and parses one agent Markdown file, refusing anything but a regular file (without
 * blocking on a FIFO), files over 1 MiB and files that are not UTF-8.
 */
export async function readAgentFile(options: ReadAgentFileOptions): Promise<ParseAgentResult> {
  const { filePath } = options;
  let bytes: Buffer;
  try {
    // Non-blocking, so a FIFO swapped in after listing cannot stall the open; it is refused below.
    const handle = await open(filePath, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) {
        return failure(
          filePath,
          'is not a regular file (a FIFO, a device or a directory); agent files must be plain files',
        );
      }
      if (stats.size > MAX_AGENT_FILE_BYTES) {
        return failure(
          filePath,
          `file is ${stats.size} bytes, over the ${MAX_AGENT_FILE_BYTES}-byte limit for agent files; shorten it`,
        );
      }
      // Never read more than the limit allows: some files (under /proc, for one) report a
      // size of 0 and then stream far more, and a file may grow after the size check.
      const limit = MAX_AGENT_FILE_BYTES + 1;
      let buffer = Buffer.alloc(Math.min(limit, Math.max(stats.size + 1, 64 * 1024)));
      let length = 0;
      for (;;) {
        if (length === buffer.length) {
          if (buffer.length >= limit) break;
          const grown = Buffer.alloc(Math.min(limit, buffer.length * 2));
          buffer.copy(grown, 0, 0, length);
          buffer = grown;
        }
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      bytes = buffer.subarray(0, length);
    } finally {
      await handle.close();
    }
  } catch (error) {
    return failure(
      filePath,
      `could not be read: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
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
