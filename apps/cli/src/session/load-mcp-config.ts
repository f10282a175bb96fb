import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../exit-codes.js';

/** One server of a `.mcp.json` file. Only stdio servers (a command to run) are supported. */
const McpServerEntry = z
  .object({
    /** `stdio` (the default); other transports are refused with a clear error. */
    type: z.string().optional(),
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

/** The `.mcp.json` shape: `{ "mcpServers": { "<name>": { "command": …, "args": […] } } }`. */
export const McpConfigFile = z
  .object({ mcpServers: z.record(z.string(), McpServerEntry) })
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
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(
      `--mcp-config ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not valid JSON (${(error as Error).message})`}.`,
    );
  }
  const parsed = McpConfigFile.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(
      `--mcp-config ${path}: ${issue?.path.join('.') || 'the file'}: ${issue?.message ?? 'invalid'}. Expected { "mcpServers": { "name": { "command": "…", "args": […] } } }.`,
    );
  }
  const servers: Record<string, StdioServer> = {};
  for (const [name, entry] of Object.entries(parsed.data.mcpServers)) {
    if (entry.type !== undefined && entry.type !== 'stdio') {
      throw new UsageError(
        `--mcp-config ${path}: mcpServers.${name}: transport "${entry.type}" is not supported; delegate runs stdio servers (a "command" to start).`,
      );
    }
    servers[name] = {
      command: entry.command,
      ...(entry.args ? { args: entry.args } : {}),
      ...(entry.env ? { env: entry.env } : {}),
      ...(entry.cwd ? { cwd: resolve(dirname(path), entry.cwd) } : {}),
    };
  }
  return servers;
}
