import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_MCP_TOOL_NAME_LENGTH,
  assignMcpToolNames,
  buildMcpToolName,
  mcpServerToolPrefix,
} from './mcp-tool-name.js';

const apiToolName = /^[a-zA-Z0-9_-]{1,128}$/;
const anyName = fc.string({ unit: 'grapheme', maxLength: 200 });

describe('buildMcpToolName', () => {
  it('gives a name the API accepts for any server and tool name', () => {
    fc.assert(
      fc.property(anyName, anyName, (server, tool) => {
        const name = buildMcpToolName(server, tool);
        expect(name).toMatch(apiToolName);
        expect(name.startsWith(mcpServerToolPrefix(server))).toBe(true);
      }),
    );
  });

  it('keeps a name that is already valid unchanged', () => {
    const valid = fc.stringMatching(/^[a-zA-Z0-9_-]{0,50}$/);
    fc.assert(
      fc.property(valid, valid, (server, tool) => {
        expect(buildMcpToolName(server, tool)).toBe(`mcp__${server}__${tool}`);
      }),
    );
  });

  it('shortens long names to exactly the limit, with a tag that tells them apart', () => {
    const first = buildMcpToolName('s', `${'x'.repeat(200)}1`);
    const second = buildMcpToolName('s', `${'x'.repeat(200)}2`);
    expect(first).toHaveLength(MAX_MCP_TOOL_NAME_LENGTH);
    expect(first).not.toBe(second);
    expect(first.slice(0, 100)).toBe(second.slice(0, 100));
  });
});

describe('assignMcpToolNames', () => {
  it('gives unique valid names to any list of distinct tool names', () => {
    fc.assert(
      fc.property(anyName, fc.uniqueArray(anyName, { maxLength: 20 }), (server, tools) => {
        const names = assignMcpToolNames(server, tools);
        for (const name of names) expect(name).toMatch(apiToolName);
        expect(new Set(names).size).toBe(tools.length);
      }),
    );
  });
});
