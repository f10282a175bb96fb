import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../exit-codes.js';
import { readFlagFile } from './read-flag-file.js';

/** One stdio server of a `.mcp.json` file (a command to run). */
const StdioServerEntry = z
  .object({
    /** `stdio` or absent. */
    type: z.literal('stdio').optional(),
    /** Executable to run. */
    command: z.string().min(1),
    /** Its arguments. */
    args: z.array(z.string()).optional(),
    /** Extra environment variables. */
    env: z.record(z.string(), z.string()).optional(),
    /** Working directory (relative to the config file's folder). */
    cwd: z.string().optional(),
  })
  .passthrough();

/** The `.mcp.json` shape: `{ "mcpServers": { "<name>": { … } } }`; each server is checked on its own. */
export const McpConfigFile = z
  .object({ mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())) })
  .passthrough();

/** A stdio server as `createMcpManager` takes it. */
export type StdioServer = {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
};

/** Reads a `.mcp.json`-shaped file into stdio server configurations, or throws a `UsageError` naming the file and field. */
export function loadMcpConfig(path: string): Record<string, StdioServer> {
  const text = readFlagFile({ flag: '--mcp-config', path });
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UsageError(`--mcp-config ${path}: not valid JSON (${(error as Error).message}).`);
  }
  const parsed = McpConfigFile.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `--mcp-config ${path}: ${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}. Expected { "mcpServers": { "name": { "command": "…", "args": […] } } }.`,
    );
  }
  const servers: Record<string, StdioServer> = {};
  for (const [name, raw] of Object.entries(parsed.data.mcpServers)) {
    servers[name] = readStdioServer(raw, {
      where: `--mcp-config ${path}: mcpServers.${name}`,
      baseDir: dirname(path),
    });
  }
  return servers;
}

/**
 * One stdio server entry (`{ command, args?, env?, cwd? }`) as `createMcpManager` takes it, or
 * a `UsageError` starting with `where` (the flag, the file and the entry); a relative `cwd` is
 * taken from `baseDir`.
 */
export function readStdioServer(
  raw: Record<string, unknown>,
  options: { where: string; baseDir: string },
): StdioServer {
  const { where } = options;
  // The transport first: an HTTP server has no command, and the error should say so.
  if (raw['type'] !== undefined && raw['type'] !== 'stdio') {
    throw new UsageError(
      `${where}: transport "${String(raw['type'])}" is not supported; delegate runs stdio servers (a "command" to start).`,
    );
  }
  const entry = StdioServerEntry.safeParse(raw);
  if (!entry.success) {
    const issue = entry.error.issues[0];
    throw new UsageError(
      `${where}.${issue?.path.join('.') || 'command'}: ${issue?.message ?? 'invalid'}. A stdio server needs a "command".`,
    );
  }
  const { command, args, env, cwd } = entry.data;
  return {
    command,
    ...(args ? { args } : {}),
    ...(env ? { env } : {}),
    ...(cwd ? { cwd: resolve(options.baseDir, cwd) } : {}),
  };
}
