import { resolve } from 'node:path';
import {
  type AgentDefinition,
  type Tool,
  type ToolUseContext,
  mcpToolNamePrefix,
} from '@delegate/core';
import type { McpServerConfig } from '@delegate/tools';
import { disallowedNameRemoves } from '@delegate/tool-filter';
import { z } from 'zod';
import { loadTools } from '../util/load-tools.js';
import type { DefinitionWarning } from './definition-extras.js';

/**
 * One inline server of an agent file, as Claude Code reads it: a stdio server (`command`,
 * with `args`, `env`, `cwd`). `type` may say `stdio`; servers reached over the network
 * (`sse`, `http`, `ws`) are not started.
 */
// YAML reads `--port 8080` or `DEBUG: true` as a number or a boolean: a program gets text.
const Text = z.union([z.string(), z.number(), z.boolean()]).transform(String);

const InlineServer = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().trim().min(1),
  args: z.array(Text).optional(),
  env: z.record(z.string(), Text).optional(),
  cwd: z.string().min(1).optional(),
});

/** The inline servers of a definition that can start, and a warning for each that cannot. */
export type InlineMcpServers = {
  /** Servers by name, to start for each run of the agent. */
  servers: Record<string, McpServerConfig>;
  /** Why the others are not started. */
  warnings: DefinitionWarning[];
};

function where(agent: AgentDefinition): string {
  return `Agent "${agent.agentType}"${agent.filePath ? ` (${agent.filePath})` : ''}`;
}

function whyNot(config: unknown): string {
  const type = (config as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && type !== 'stdio')
    return `it is a ${type} server, and Delegate starts only stdio servers (a command to run)`;
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    return 'it is not a server definition; expected { command, args?, env?, cwd? }';
  const parsed = InlineServer.safeParse(config);
  if (parsed.success) return '';
  const field = parsed.error.issues[0]?.path.join('.') ?? '';
  if (field === 'command') return 'it has no `command` to run (a program name or path)';
  return `its \`${field}\` is not ${field.startsWith('env') ? 'text' : field.startsWith('args') ? 'a list of words' : 'a path'}; expected { command, args?, env?, cwd? }`;
}

/** Why an inline server named `name` clashes with a session server, or '' when it does not. */
function sessionClash(name: string, sessionServers: ReadonlySet<string>): string {
  if (sessionServers.has(name))
    return 'it has the name of a server of the session, whose tools the agent gets instead';
  // Tool names hold server names normalized: `s.1` and `s_1` would both give `mcp__s_1__…`.
  const prefix = mcpToolNamePrefix(name);
  const alike = [...sessionServers].find((server) => mcpToolNamePrefix(server) === prefix);
  if (alike === undefined) return '';
  return `its tools would be named like those of the session's server "${alike}" (${prefix}…), whose tools the agent gets instead; rename one of the two`;
}

/**
 * Reads the servers an agent file defines inline (`mcpServers: [{ name: { command, … } }]`).
 * A server named like one of the session's (`sessionServers`) is the session's: the inline one
 * is not started, as its tools would have the same names. That counts names that only
 * normalize alike in tool names (`s_1` beside the session's `s.1`), and the warning says so.
 * Names of session servers in the list are not read here (they need no start).
 */
export function readInlineMcpServers(
  agent: AgentDefinition,
  sessionServers: ReadonlySet<string>,
): InlineMcpServers {
  const servers: Record<string, McpServerConfig> = {};
  const warnings: DefinitionWarning[] = [];
  for (const entry of agent.mcpServers ?? []) {
    if (typeof entry === 'string') continue;
    for (const [name, config] of Object.entries(entry)) {
      const clash = sessionClash(name, sessionServers);
      const problem =
        clash !== ''
          ? clash
          : Object.hasOwn(servers, name)
            ? 'it is defined twice; the first definition is used'
            : whyNot(config);
      if (problem !== '') {
        warnings.push({
          code: 'MCP_SERVERS_IGNORED',
          message: `${where(agent)} defines MCP server "${name}" inline, which is not started: ${problem}.`,
        });
        continue;
      }
      const parsed = InlineServer.parse(config);
      servers[name] = {
        command: parsed.command,
        ...(parsed.args ? { args: parsed.args } : {}),
        ...(parsed.env ? { env: parsed.env } : {}),
        ...(parsed.cwd ? { cwd: parsed.cwd } : {}),
      };
    }
  }
  return { servers, warnings };
}

/** An agent's own MCP servers for one run: their tools, what failed, and how to stop them. */
export type AgentMcpConnection = {
  /** Tools of the servers that connected, named `mcp__<server>__<tool>`. */
  tools: Tool[];
  /** One per server that did not connect, with its error. */
  warnings: DefinitionWarning[];
  /** Disconnects every server and stops its process. */
  close(): Promise<void>;
};

/**
 * The names of `names` that are not tools of the agent's own `servers` (`mcp__<server>__…`,
 * the server's name normalized as tool names are): those exist only once its run has started
 * the servers, so a `tools` list naming them is not a mistake.
 */
export async function namesNotOfOwnServers(
  names: readonly string[],
  servers: readonly string[],
): Promise<string[]> {
  if (servers.length === 0 || names.length === 0) return [...names];
  const { normalizeMcpName } = await loadTools();
  const prefixes = servers.map((server) => `mcp__${normalizeMcpName(server)}`);
  return names.filter(
    (name) => !prefixes.some((prefix) => name === prefix || name.startsWith(`${prefix}__`)),
  );
}

/** How long an agent's own server may take to start, initialize and list its tools. */
export const AGENT_MCP_CONNECT_TIMEOUT_MS = 30_000;

/**
 * Starts an agent's inline servers for one run, in its working directory (a server's
 * relative `cwd` is taken from there), and waits until each has connected or failed (at most
 * `connectTimeoutMs`) or `signal` aborts. The servers get a minimal environment (`HOME`,
 * `PATH`, `SHELL`, `TERM`) plus their own `env`, taken literally (no `${VAR}` expansion), never
 * the session's API key. Resolves with their tools; `close` stops them (once, however often
 * it is called).
 */
export async function connectAgentMcpServers(options: {
  agentType: string;
  servers: Readonly<Record<string, McpServerConfig>>;
  cwd: string;
  signal: AbortSignal;
  connectTimeoutMs: number;
  /** Gets the connection as soon as the servers are starting (its `close` already works). */
  onOpen?: (connection: AgentMcpConnection) => void;
}): Promise<AgentMcpConnection> {
  const { createMcpManager } = await loadTools();
  const servers = Object.fromEntries(
    Object.entries(options.servers).map(([name, config]) => [
      name,
      { ...config, cwd: resolve(options.cwd, config.cwd ?? '.') },
    ]),
  );
  const manager = createMcpManager({ servers, connectTimeoutMs: options.connectTimeoutMs });
  let closing: Promise<void> | undefined;
  const connection: AgentMcpConnection = {
    tools: [],
    warnings: [],
    close: () => (closing ??= manager.close()),
  };
  options.onOpen?.(connection);
  let onAbort = (): void => undefined;
  const aborted = new Promise<void>((settle) => {
    onAbort = () => settle();
    if (options.signal.aborted) settle();
    else options.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([manager.whenSettled(), aborted]);
  } finally {
    options.signal.removeEventListener('abort', onAbort);
  }
  connection.warnings = manager
    .getClients()
    // One still pending was cut short by the abort: the run ends anyway.
    .filter((client) => client.type === 'failed')
    .map((client) => ({
      code: 'MCP_SERVER_FAILED',
      message: `Agent "${options.agentType}" could not start its MCP server "${client.name}"${client.error ? `: ${client.error}` : ''}; it runs without that server's tools.`,
    }));
  connection.tools = manager.getTools();
  return connection;
}

/**
 * `tools` without those `disallowedTools` names: a tool's own name, or `mcp__<server>` for
 * every tool of that server (as a definition's `disallowedTools` removes them).
 */
export function withoutDisallowed(
  tools: readonly Tool[],
  disallowedTools: readonly string[] | undefined,
): Tool[] {
  if (!disallowedTools?.length) return [...tools];
  return tools.filter(
    (tool) => !disallowedTools.some((name) => disallowedNameRemoves(name, tool.name)),
  );
}

/** `context` with `extra` tools after its own (a tool whose name it has already is left out). */
export function withExtraTools(context: ToolUseContext, extra: readonly Tool[]): ToolUseContext {
  if (extra.length === 0) return context;
  const names = new Set(context.options.tools.map((tool) => tool.name));
  const tools = [...context.options.tools, ...extra.filter((tool) => !names.has(tool.name))];
  return { ...context, options: { ...context.options, tools } };
}
