import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { DelegateError } from '@delegate/core';
import { createMcpTool } from './mcp-tool.js';

describe('createMcpTool', () => {
  it('refuses a tool whose input schema stays too large, naming server, tool and sizes', () => {
    const definition = {
      name: 'enums',
      inputSchema: { type: 'object', properties: { a: { enum: ['e'.repeat(50_000)] } } },
    };
    let caught: unknown;
    try {
      createMcpTool({ serverName: 's', definition, client: {} as Client });
    } catch (error) {
      caught = error;
    }
    expect(DelegateError.hasCode(caught, 'LIMIT_EXCEEDED')).toBe(true);
    expect((caught as Error).message).toMatch(
      /MCP tool enums of server "s" is 50,0\d\d characters of JSON, more than the 32,000 allowed/,
    );
  });
});
