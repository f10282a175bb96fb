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

describe('mcpServersWithTools with the configured server names', () => {
  it('names each server as configured, not as its tool names spell it', () => {
    const list = tools('mcp__acme_tools__x', 'mcp__gh__ent__search', 'mcp__gh__y', 'Read');
    expect(mcpServersWithTools(list)).toEqual(['acme_tools', 'gh']);
    expect(mcpServersWithTools(list, ['gh', 'gh__ent', 'acme.tools', 'idle'])).toEqual([
      'acme.tools',
      'gh__ent',
      'gh',
    ]);
  });

  it('reads the name of a tool of no configured server from the tool name', () => {
    expect(mcpServersWithTools(tools('mcp__db__q', 'mcp__s_1__x'), ['s.1'])).toEqual(['db', 's.1']);
  });

  it('gives every configured server that has a tool, exactly once', () => {
    const server = fc.stringMatching(/^[a-z.]{1,4}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(server, { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (names, picks) => {
          const used = picks.flatMap((pick) =>
            names.length > 0 ? [names[pick % names.length]!] : [],
          );
          const list = used.map((name) => ({ name: `mcp__${name.replace(/\./g, '_')}__tool` }));
          const result = mcpServersWithTools(list, names);
          expect(new Set(result).size).toBe(result.length);
          for (const name of result) {
            const prefix = `mcp__${name.replace(/\./g, '_')}__`;
            expect(list.some((tool) => tool.name.startsWith(prefix))).toBe(true);
          }
          expect(new Set(result)).toEqual(new Set(used));
        },
      ),
    );
  });
});
