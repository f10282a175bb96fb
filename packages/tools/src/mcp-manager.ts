import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StdioClientTransport,
  getDefaultEnvironment,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { errorMessage, type McpClientState, type Tool } from '@delegate/core';
import { type McpToolDefinition, createMcpTool } from './mcp-tool.js';

/** How to start one stdio MCP server. */
export type McpServerConfig = {
  /** Executable to run. */
  command: string;
  /** Its arguments. */
  args?: string[];
  /** Extra environment variables (added to a minimal safe default environment). */
  env?: Record<string, string>;
  /** Working directory of the server. */
  cwd?: string;
};

/** What the manager reports on every change. */
export type McpSnapshot = {
  /** State of every configured server. */
  clients: McpClientState[];
  /** Tools of every connected server. */
  tools: Tool[];
};

/** Options of `createMcpManager`. */
export type McpManagerOptions = {
  /** Servers by name. */
  servers: Record<string, McpServerConfig>;
  /** Called after every state change (for example to copy it into `AppState.mcp`). */
  onChange?: (snapshot: McpSnapshot) => void;
  /** Time allowed for starting, initializing and listing tools (default 30000 ms). */
  connectTimeoutMs?: number;
  /** Timeout of each tool call (default: the SDK's, 60 s). */
  requestTimeoutMs?: number;
};

/** Connects configured MCP servers and exposes their tools. */
export type McpManager = {
  /** State of every configured server: pending, connected or failed. */
  getClients(): McpClientState[];
  /** Tools of the connected servers, named `mcp__<server>__<tool>`. */
  getTools(): Tool[];
  /** Resolves once no server is pending any more. */
  whenSettled(): Promise<McpClientState[]>;
  /** Disconnects every server and stops its process. */
  close(): Promise<void>;
};

type ServerEntry = {
  state: McpClientState;
  tools: Tool[];
  client?: Client;
  transport?: StdioClientTransport;
  stopping?: Promise<unknown>;
};

const stderrTailBytes = 2000;

function describeCommand(config: McpServerConfig): string {
  return [config.command, ...(config.args ?? [])].join(' ');
}

/**
 * Starts every configured stdio MCP server in parallel (each with a connect timeout),
 * lists their tools and tracks each server as pending, connected or failed. A server
 * that exits or drops its connection later becomes failed and its tools disappear.
 */
export function createMcpManager(options: McpManagerOptions): McpManager {
  const connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  const entries = new Map<string, ServerEntry>();
  let closing = false;

  const snapshot = (): McpSnapshot => ({
    clients: [...entries.values()].map((entry) => ({ ...entry.state })),
    tools: [...entries.values()].flatMap((entry) => entry.tools),
  });
  const notify = (): void => options.onChange?.(snapshot());

  const fail = (name: string, entry: ServerEntry, message: string): void => {
    entry.state = { name, type: 'failed', error: message };
    entry.tools = [];
    notify();
  };

  const connect = async (
    name: string,
    config: McpServerConfig,
    entry: ServerEntry,
  ): Promise<void> => {
    let stderr = '';
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-stderrTailBytes);
    });
    const client = new Client({ name: 'delegate', version: '0.1.0' });
    entry.transport = transport;
    entry.client = client;

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`timed out after ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
    });
    try {
      const listed = await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: connectTimeoutMs });
          return client.listTools(undefined, { timeout: connectTimeoutMs });
        })(),
        timeout,
      ]);
      if (closing) {
        await transport.close().catch(() => undefined);
        return;
      }
      entry.tools = listed.tools.map((definition) =>
        createMcpTool({
          serverName: name,
          definition: definition as McpToolDefinition,
          client,
          ...(options.requestTimeoutMs === undefined
            ? {}
            : { requestTimeoutMs: options.requestTimeoutMs }),
        }),
      );
      entry.state = { name, type: 'connected' };
      client.onclose = () => {
        if (closing || entry.state.type !== 'connected') return;
        const detail = stderr.trim() === '' ? '' : ` Server stderr: ${stderr.trim()}`;
        fail(
          name,
          entry,
          `MCP server "${name}" (${describeCommand(config)}) closed its connection.${detail}`,
        );
      };
      notify();
    } catch (error) {
      // The SDK's close waits seconds before signalling an unresponsive server; signal it
      // now, report the failure first and let `close()` wait for the process.
      const pid = transport.pid;
      if (pid !== null) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      entry.stopping = transport.close().catch(() => undefined);
      if (closing) return;
      const detail = stderr.trim() === '' ? '' : ` Server stderr: ${stderr.trim()}`;
      fail(
        name,
        entry,
        `Could not connect to MCP server "${name}" (${describeCommand(config)}): ${errorMessage(error)}.${detail} ` +
          'Check the command, its arguments and that it speaks MCP over stdio.',
      );
    } finally {
      clearTimeout(timer);
    }
  };

  for (const name of Object.keys(options.servers)) {
    entries.set(name, { state: { name, type: 'pending' }, tools: [] });
  }
  const settled = Promise.all(
    Object.entries(options.servers).map(([name, config]) => {
      const entry = entries.get(name) as ServerEntry;
      return connect(name, config, entry);
    }),
  );

  return {
    getClients: () => snapshot().clients,
    getTools: () => snapshot().tools,
    whenSettled: async () => {
      await settled;
      return snapshot().clients;
    },
    close: async () => {
      closing = true;
      await Promise.all(
        [...entries.values()].map(async (entry) => {
          await entry.client?.close().catch(() => undefined);
          await entry.transport?.close().catch(() => undefined);
          await entry.stopping;
          entry.tools = [];
        }),
      );
    },
  };
}
