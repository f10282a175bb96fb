import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { errorMessage, type McpClientState, type Tool } from '@delegate/core';
import { type McpToolDefinition, createMcpTool } from './mcp-tool.js';
import { assignMcpToolNames, mcpNameTag } from './mcp-tool-name.js';

/**
 * Loads the MCP SDK when a server is first connected, not when @delegate/tools is
 * imported: it is the package's heaviest dependency and most hosts configure no server.
 */
async function loadMcpSdk() {
  const [client, stdio] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
  };
}

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
  /** Longest text of one tool result passed to the model (default 100000 characters). */
  maxResultChars?: number;
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
const maxToolPages = 100;

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

  const snapshot = (): McpSnapshot => {
    // Server names containing `__` can make names of different servers meet
    // (`a__b` + `c` and `a` + `b__c`); a later server (in configuration order) gets a tag.
    const taken = new Set<string>();
    const tools: Tool[] = [];
    for (const [name, entry] of entries) {
      for (const tool of entry.tools) {
        const unique = taken.has(tool.name) ? `${tool.name}_${mcpNameTag(name)}` : tool.name;
        taken.add(unique);
        tools.push(unique === tool.name ? tool : { ...tool, name: unique });
      }
    }
    return { clients: [...entries.values()].map((entry) => ({ ...entry.state })), tools };
  };
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
    let sdk: Awaited<ReturnType<typeof loadMcpSdk>>;
    try {
      sdk = await loadMcpSdk();
    } catch (error) {
      fail(name, entry, `the MCP SDK could not be loaded: ${errorMessage(error)}`);
      return;
    }
    if (closing) return;
    const { Client, StdioClientTransport, getDefaultEnvironment } = sdk;
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
      const definitions = await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: connectTimeoutMs });
          const all: McpToolDefinition[] = [];
          let cursor: string | undefined;
          // Follow pagination, but not forever: a server could hand out cursors endlessly.
          for (let page = 0; page < maxToolPages; page++) {
            const listed = await client.listTools(cursor === undefined ? undefined : { cursor }, {
              timeout: connectTimeoutMs,
            });
            all.push(...(listed.tools as McpToolDefinition[]));
            cursor = listed.nextCursor;
            if (cursor === undefined) break;
          }
          return all;
        })(),
        timeout,
      ]);
      if (closing) {
        await transport.close().catch(() => undefined);
        return;
      }
      const names = assignMcpToolNames(
        name,
        definitions.map((definition) => definition.name),
      );
      entry.tools = definitions.flatMap((definition, index) => {
        const toolName = names[index];
        if (toolName === undefined) return [];
        return [
          createMcpTool({
            serverName: name,
            definition,
            client,
            name: toolName,
            ...(options.requestTimeoutMs === undefined
              ? {}
              : { requestTimeoutMs: options.requestTimeoutMs }),
            ...(options.maxResultChars === undefined
              ? {}
              : { maxResultChars: options.maxResultChars }),
          }),
        ];
      });
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
