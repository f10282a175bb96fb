import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { errorMessage, type McpClientState, type Tool } from '@delegate/core';
import { MAX_MCP_INPUT_SCHEMA_CHARS, capMcpInputSchema } from './mcp-input-schema.js';
import { type McpToolDefinition, createMcpTool } from './mcp-tool.js';
import {
  MAX_MCP_SERVER_PART_LENGTH,
  MAX_MCP_TOOL_NAME_LENGTH,
  assignMcpToolNames,
  mcpNameTag,
  mcpServerToolPrefix,
  normalizeMcpName,
  withMcpNameTag,
} from './mcp-tool-name.js';

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
  /**
   * Largest JSON-RPC message taken from a server (default 32 MiB). A larger one makes the MCP
   * SDK close the connection and stop the server. Larger limits cost time: the SDK copies
   * its buffer on every chunk it reads (30 MB took about 4 s, 60 MB about 15 s).
   */
  maxMessageBytes?: number;
  /**
   * Called once for each tool that was renamed (a name too long for the API or colliding
   * with another) or whose input schema was cut or left out for its size. Without it the
   * message goes to `process.emitWarning`.
   */
  onWarning?: (message: string) => void;
};

/** Connects configured MCP servers and exposes their tools. */
export type McpManager = {
  /** State of every configured server: pending, connected or failed. */
  getClients(): McpClientState[];
  /** Tools of the connected servers, named `mcp__<server>__<tool>`. */
  getTools(): Tool[];
  /** Resolves once no server is pending any more. */
  whenSettled(): Promise<McpClientState[]>;
  /** Every warning given so far (the messages `onWarning` got), oldest first. */
  getWarnings(): string[];
  /** Disconnects every server and stops its process. */
  close(): Promise<void>;
};

type ServerEntry = {
  state: McpClientState;
  tools: Tool[];
  client?: Client;
  transport?: StdioClientTransport;
  stopping?: Promise<unknown>;
  /** Why the connection dropped, when the client closed it (a message over the size limit). */
  disconnectReason?: string;
  /** Raw names of the tools with a call in flight, with their number of calls. */
  running: Map<string, number>;
};

const stderrTailBytes = 2000;
const maxToolPages = 100;
/** Default of `maxMessageBytes`: more than the SDK's 10 MB, which one large result exceeds. */
export const DEFAULT_MCP_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

function describeCommand(config: McpServerConfig): string {
  return [config.command, ...(config.args ?? [])].join(' ');
}

/** The SDK's stdio transport throws this (then closes) when a message outgrows its buffer. */
function isMessageTooLarge(error: unknown): boolean {
  return error instanceof Error && /ReadBuffer exceeded maximum size/.test(error.message);
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : `${bytes.toLocaleString('en-US')} bytes`;
}

/** Counts a tool's calls in flight in `running`, so a dropped connection can name them. */
function trackCalls(tool: Tool, rawName: string, running: Map<string, number>): Tool {
  const call: Tool['call'] = async (...args) => {
    running.set(rawName, (running.get(rawName) ?? 0) + 1);
    try {
      return await tool.call(...args);
    } finally {
      const left = (running.get(rawName) ?? 1) - 1;
      if (left === 0) running.delete(rawName);
      else running.set(rawName, left);
    }
  };
  return { ...tool, call };
}

/** Why a tool is exposed under another name than `mcp__<server>__<tool>` normalized. */
function renameWarning(serverName: string, rawName: string, exposed: string): string | undefined {
  const plain = `mcp__${normalizeMcpName(serverName)}__${normalizeMcpName(rawName)}`;
  if (exposed === plain) return undefined;
  const reason = !plain.startsWith(mcpServerToolPrefix(serverName))
    ? `the server's name is too long to keep whole in tool names (over ${MAX_MCP_SERVER_PART_LENGTH} characters)`
    : plain.length > MAX_MCP_TOOL_NAME_LENGTH
      ? `mcp__<server>__<tool> would be ${plain.length} characters, over the API's limit of ${MAX_MCP_TOOL_NAME_LENGTH}`
      : 'its name collides with another tool name after normalization';
  return `MCP tool "${rawName}" of server "${serverName}" is exposed as ${exposed}: ${reason}.`;
}

/** The schema to send for a tool, or undefined to leave it out, with a warning when changed. */
function fitInputSchema(
  serverName: string,
  definition: McpToolDefinition,
  warn: (message: string) => void,
): McpToolDefinition | undefined {
  const capped = capMcpInputSchema(definition.inputSchema);
  const what = `MCP tool "${definition.name}" of server "${serverName}"`;
  const size = Number.isFinite(capped.originalChars)
    ? `its input schema is ${capped.originalChars.toLocaleString('en-US')} characters of JSON`
    : 'its input schema is nested too deeply to serialize';
  if (capped.schema === undefined) {
    warn(
      `${what} was left out: ${size}, over the limit of ${MAX_MCP_INPUT_SCHEMA_CHARS.toLocaleString('en-US')} ` +
        `even with the descriptions inside it cut (${capped.chars.toLocaleString('en-US')}).`,
    );
    return undefined;
  }
  if ('descriptionsCutTo' in capped && capped.descriptionsCutTo !== undefined) {
    warn(
      `${what}: ${size}, over the limit of ${MAX_MCP_INPUT_SCHEMA_CHARS.toLocaleString('en-US')}; ` +
        `descriptions inside it were cut to ${capped.descriptionsCutTo.toLocaleString('en-US')} characters ` +
        `(now ${capped.chars.toLocaleString('en-US')}).`,
    );
    return { ...definition, inputSchema: capped.schema };
  }
  return definition;
}

/**
 * Starts every configured stdio MCP server in parallel (each with a connect timeout),
 * lists their tools and tracks each server as pending, connected or failed. A server
 * that exits or drops its connection later becomes failed and its tools disappear.
 */
export function createMcpManager(options: McpManagerOptions): McpManager {
  const connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MCP_MAX_MESSAGE_BYTES;
  const entries = new Map<string, ServerEntry>();
  const warnings: string[] = [];
  let closing = false;

  const warn = (message: string): void => {
    if (warnings.includes(message)) return;
    warnings.push(message);
    if (options.onWarning) options.onWarning(message);
    else process.emitWarning(message, { code: 'DELEGATE_MCP_TOOL' });
  };

  const snapshot = (): McpSnapshot => {
    // Server names containing `__` can make names of different servers meet
    // (`a__b` + `c` and `a` + `b__c`); a later server (in configuration order) gets a tag.
    const taken = new Set<string>();
    const tools: Tool[] = [];
    for (const [name, entry] of entries) {
      for (const tool of entry.tools) {
        let unique = tool.name;
        for (let attempt = 0; taken.has(unique); attempt++) {
          unique = withMcpNameTag(
            tool.name,
            mcpNameTag(attempt === 0 ? name : `${name}\0${attempt}`),
          );
        }
        taken.add(unique);
        if (unique !== tool.name) {
          warn(
            `An MCP tool of server "${name}" is exposed as ${unique}: ${tool.name} is also the name of a tool of another server.`,
          );
        }
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
      maxBufferSize: maxMessageBytes,
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-stderrTailBytes);
    });
    const client = new Client({ name: 'delegate', version: '0.1.0' });
    client.onerror = (error) => {
      // The transport closes right after this; the pending calls then fail with
      // "Connection closed", and the reason would be lost.
      if (!isMessageTooLarge(error) || entry.disconnectReason !== undefined) return;
      const running = [...entry.running.keys()];
      entry.disconnectReason =
        `a message from the server was larger than the limit of ${formatBytes(maxMessageBytes)} (option maxMessageBytes)` +
        (running.length === 0
          ? ''
          : ` while ${running.map((tool) => `tool ${tool}`).join(', ')} ran`) +
        ', so the MCP client closed the connection and stopped the server; its tools are unavailable for the rest of the session';
    };
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
      entry.tools = definitions.flatMap((listed, index) => {
        const toolName = names[index];
        if (toolName === undefined) return [];
        const definition = fitInputSchema(name, listed, warn);
        if (definition === undefined) return [];
        const renamed = renameWarning(name, definition.name, toolName);
        if (renamed !== undefined) warn(renamed);
        const tool = createMcpTool({
          serverName: name,
          definition,
          client,
          name: toolName,
          disconnectReason: () => entry.disconnectReason,
          ...(options.requestTimeoutMs === undefined
            ? {}
            : { requestTimeoutMs: options.requestTimeoutMs }),
          ...(options.maxResultChars === undefined
            ? {}
            : { maxResultChars: options.maxResultChars }),
        });
        return [trackCalls(tool, definition.name, entry.running)];
      });
      entry.state = { name, type: 'connected' };
      client.onclose = () => {
        if (closing || entry.state.type !== 'connected') return;
        const detail = stderr.trim() === '' ? '' : ` Server stderr: ${stderr.trim()}`;
        fail(
          name,
          entry,
          entry.disconnectReason === undefined
            ? `MCP server "${name}" (${describeCommand(config)}) closed its connection.${detail}`
            : `MCP server "${name}" (${describeCommand(config)}) was disconnected: ${entry.disconnectReason}.`,
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
        `Could not connect to MCP server "${name}" (${describeCommand(config)}): ${entry.disconnectReason ?? errorMessage(error)}.${detail} ` +
          'Check the command, its arguments and that it speaks MCP over stdio.',
      );
    } finally {
      clearTimeout(timer);
    }
  };

  for (const name of Object.keys(options.servers)) {
    entries.set(name, { state: { name, type: 'pending' }, tools: [], running: new Map() });
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
    getWarnings: () => [...warnings],
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
