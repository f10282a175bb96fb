import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { z } from 'zod';
import { DelegateError, errorMessage, type Tool, type ToolUseContext } from '@delegate/core';
import { MAX_MCP_INPUT_SCHEMA_CHARS, capMcpInputSchema } from './mcp-input-schema.js';
import { buildMcpToolName } from './mcp-tool-name.js';

/** A tool as an MCP server lists it. */
export type McpToolDefinition = {
  /** Name on the server. */
  name: string;
  /** Description from the server. */
  description?: string;
  /** JSON Schema of the input, from the server. */
  inputSchema: Record<string, unknown>;
  /** Hints from the server. */
  annotations?: { readOnlyHint?: boolean };
};

/** Input of an MCP tool: any JSON object, validated by the server against its own schema. */
const McpInput = z.record(z.string(), z.unknown());
type McpInput = z.infer<typeof McpInput>;

type ContentItem = {
  type: string;
  text?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  resource?: unknown;
};

function describeContentItem(item: ContentItem): string {
  switch (item.type) {
    case 'text':
      return typeof item.text === 'string' ? item.text : '';
    case 'image':
    case 'audio':
      return `[${item.type} content: ${typeof item.mimeType === 'string' ? item.mimeType : 'unknown type'}]`;
    case 'resource': {
      const resource = (item.resource ?? {}) as { uri?: unknown; text?: unknown };
      const text = typeof resource.text === 'string' ? `\n${resource.text}` : '';
      return `[resource: ${String(resource.uri ?? 'unknown')}]${text}`;
    }
    case 'resource_link':
      return `[resource link: ${String(item.uri ?? 'unknown')}]`;
    default:
      return `[${item.type} content]`;
  }
}

/** Longest tool description taken from a server (a server could otherwise flood the prompt). */
export const MAX_MCP_DESCRIPTION_CHARS = 2048;
/** Default cap on the text of one MCP tool result. */
export const DEFAULT_MCP_RESULT_CHARS = 100_000;

function capText(text: string, maxChars: number, what: string): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n\n[… ${what} cut: ${text.length - maxChars} more characters not shown]`;
}

/** Maps a `tools/call` result to the text the model sees. */
export function mcpResultToText(result: Record<string, unknown>): string {
  const content = result['content'];
  if (Array.isArray(content) && content.length > 0) {
    return (content as ContentItem[]).map(describeContentItem).join('\n');
  }
  if (result['structuredContent'] !== undefined) return JSON.stringify(result['structuredContent']);
  if (result['toolResult'] !== undefined) return JSON.stringify(result['toolResult']);
  return '(no content)';
}

/**
 * Wraps one tool of a connected MCP server as a Delegate Tool named `mcp__<server>__<tool>`.
 * Its input schema is kept within 32,000 characters (`capMcpInputSchema`); a tool whose schema
 * cannot be brought under that throws `LIMIT_EXCEEDED`.
 */
export function createMcpTool(options: {
  serverName: string;
  definition: McpToolDefinition;
  client: Client;
  requestTimeoutMs?: number;
  /** Name to expose (default `buildMcpToolName(serverName, definition.name)`). */
  name?: string;
  /** Longest result text passed on; the rest is cut with a note (default 100000 characters). */
  maxResultChars?: number;
  /**
   * Why the connection to the server dropped, when that is known (for example a message over
   * the size limit): a call that fails because of it says so instead of "Connection closed".
   */
  disconnectReason?: () => string | undefined;
}): Tool<McpInput, unknown> {
  const { serverName, definition, client } = options;
  const capped = capMcpInputSchema(definition.inputSchema);
  if (capped.schema === undefined) {
    throw new DelegateError(
      'LIMIT_EXCEEDED',
      `The input schema of MCP tool ${definition.name} of server "${serverName}" is ${capped.originalChars.toLocaleString('en-US')} characters of JSON, ` +
        `more than the ${MAX_MCP_INPUT_SCHEMA_CHARS.toLocaleString('en-US')} allowed even with the descriptions inside it cut (${capped.chars.toLocaleString('en-US')}). ` +
        'Ask the server to send a smaller schema, or leave the tool out.',
    );
  }
  const inputJSONSchema = capped.schema;
  const readOnly = definition.annotations?.readOnlyHint === true;
  const maxResultChars = options.maxResultChars ?? DEFAULT_MCP_RESULT_CHARS;
  const description = capText(
    typeof definition.description === 'string'
      ? definition.description
      : `Tool ${definition.name} of MCP server ${serverName}.`,
    MAX_MCP_DESCRIPTION_CHARS,
    'description',
  );
  return {
    name: options.name ?? buildMcpToolName(serverName, definition.name),
    description: () => description,
    inputSchema: McpInput,
    inputJSONSchema,
    isMcp: true,
    isReadOnly: () => readOnly,
    isConcurrencySafe: () => readOnly,
    requiresUserInteraction: () => false,

    async call(input: McpInput, context: ToolUseContext) {
      try {
        const result = (await client.callTool(
          { name: definition.name, arguments: input },
          undefined,
          {
            signal: context.abortController.signal,
            ...(options.requestTimeoutMs === undefined
              ? {}
              : { timeout: options.requestTimeoutMs }),
          },
        )) as Record<string, unknown>;
        const text = capText(mcpResultToText(result), maxResultChars, 'result');
        return {
          content: text,
          ...(result['isError'] === true ? { isError: true } : {}),
          data: result,
        };
      } catch (error) {
        if (context.abortController.signal.aborted) {
          throw new DelegateError(
            'ABORTED',
            `MCP tool ${definition.name} of server "${serverName}" was aborted.`,
            {
              cause: error,
            },
          );
        }
        return {
          content: `MCP server "${serverName}" failed to run tool ${definition.name}: ${options.disconnectReason?.() ?? errorMessage(error)}`,
          isError: true,
        };
      }
    },
  };
}
