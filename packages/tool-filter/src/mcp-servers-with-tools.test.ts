import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { mcpServersWithTools } from './mcp-servers-with-tools.js';

const tools = (...names: string[]): { name: string }[] => names.map((name) => ({ name }));

describe('mcpServersWithTools', () => {
  it('lists each server once, in order of first appearance', () => {
    const result = mcpServersWithTools(
      tools(
        'mcp__github__create_issue',
        'Read',
        'mcp__slack__post',
        'mcp__github__list_prs',
        'mcp__db__query',
      ),
    );
    expect(result).toEqual(['github', 'slack', 'db']);
  });

  it('ignores local tools that only look like MCP tools', () => {
    const result = mcpServersWithTools([
      { name: 'mcp__github__deploy', isMcp: false },
      { name: 'mcp__slack__post', aliases: ['Bash'] },
      { name: 'mcp__db__query', isMcp: true },
    ]);
    expect(result).toEqual(['db']);
  });

  it('ignores non-MCP tools and MCP names without a server', () => {
    expect(mcpServersWithTools(tools('Read', 'mcp_github__x', 'mcp____x', 'mcp__'))).toEqual([]);
  });

  it('returns unique names, each from some mcp__ tool', () => {
    const server = fc.stringMatching(/^[a-z]{1,4}$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(server, fc.boolean()), { maxLength: 20 }), (entries) => {
        const list = entries.map(([name, isMcp]) => ({
          name: isMcp ? `mcp__${name}__tool` : name,
        }));
        const result = mcpServersWithTools(list);
        expect(new Set(result).size).toBe(result.length);
        expect(new Set(result)).toEqual(
          new Set(entries.filter(([, isMcp]) => isMcp).map(([name]) => name)),
        );
      }),
    );
  });
});
