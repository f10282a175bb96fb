import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { TOOL_NAMES } from '@delegate/core';
import {
  agentTool,
  arbitraryToolList,
  builtInTools,
  fakeTool,
  type FakeTool,
} from './__fixtures__/fake-tools.js';
import { DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS } from './default-tool-sets.js';
import { filterToolsForAgent } from './filter-tools-for-agent.js';
import { resolveAgentTools, type AgentToolFields } from './resolve-agent-tools.js';
import { toolMatchesSpecName } from './tool-name-matching.js';

const names = (tools: readonly FakeTool[]): string[] => tools.map((tool) => tool.name);

const custom = (fields: Partial<AgentToolFields> = {}): AgentToolFields => ({
  source: 'projectSettings',
  ...fields,
});

describe('resolveAgentTools', () => {
  describe('wildcard', () => {
    it('gives a sub-agent every tool left after the gates when tools is absent', () => {
      const pool = [...builtInTools(), fakeTool('mcp__docs__search')];
      const result = resolveAgentTools(custom(), pool);
      expect(result).toEqual({
        hasWildcard: true,
        validTools: [],
        invalidTools: [],
        resolvedTools: filterToolsForAgent({ tools: pool, isBuiltIn: false }),
      });
      expect(names(result.resolvedTools)).not.toContain('Agent');
      expect(names(result.resolvedTools)).toContain('mcp__docs__search');
    });

    it("reads ['*'] like an absent list", () => {
      const pool = builtInTools();
      expect(resolveAgentTools(custom({ tools: ['*'] }), pool)).toEqual(
        resolveAgentTools(custom(), pool),
      );
    });

    it('still applies the async allow-list to a wildcard', () => {
      const result = resolveAgentTools(custom({ tools: ['*'] }), builtInTools(), { isAsync: true });
      expect(names(result.resolvedTools).sort()).toEqual(
        [...DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS].sort(),
      );
    });

    it('gives the main thread the whole pool, skipping the gates', () => {
      const pool = builtInTools();
      expect(resolveAgentTools(custom(), pool, { isMainThread: true }).resolvedTools).toEqual(pool);
    });

    it('does not treat a list holding * among other names as a wildcard', () => {
      const result = resolveAgentTools(custom({ tools: ['*', 'Read'] }), builtInTools());
      expect(result.hasWildcard).toBe(false);
      expect(result.invalidTools).toEqual(['*']);
      expect(names(result.resolvedTools)).toEqual(['Read']);
    });
  });

  describe('explicit lists', () => {
    it('resolves known names, reports unknown ones and keeps the listed order', () => {
      const result = resolveAgentTools(
        custom({ tools: ['Grep', 'Nope', 'Read', 'mcp__docs__search'] }),
        [...builtInTools(), fakeTool('mcp__docs__search')],
      );
      expect(result.hasWildcard).toBe(false);
      expect(result.validTools).toEqual(['Grep', 'Read', 'mcp__docs__search']);
      expect(result.invalidTools).toEqual(['Nope']);
      expect(names(result.resolvedTools)).toEqual(['Grep', 'Read', 'mcp__docs__search']);
      expect(result.allowedAgentTypes).toBeUndefined();
    });

    it('lists no spec or tool twice', () => {
      const result = resolveAgentTools(
        custom({ tools: ['Read', 'Bash(git *)', 'Read', 'Bash', 'Nope', 'Nope'] }),
        builtInTools(),
      );
      expect(result.validTools).toEqual(['Read', 'Bash(git *)', 'Bash']);
      expect(result.invalidTools).toEqual(['Nope']);
      expect(names(result.resolvedTools)).toEqual(['Read', 'Bash']);
    });

    it('gives no tools for an empty list', () => {
      expect(resolveAgentTools(custom({ tools: [] }), builtInTools()).resolvedTools).toEqual([]);
    });

    it('reports tools the gates removed as invalid for a sub-agent', () => {
      const result = resolveAgentTools(
        custom({ tools: ['AskUserQuestion', 'TaskCreate'] }),
        builtInTools(),
        { isAsync: true },
      );
      expect(result.invalidTools).toEqual(['AskUserQuestion', 'TaskCreate']);
      expect(result.resolvedTools).toEqual([]);
    });

    it('resolves through aliases', () => {
      const reader = fakeTool('ReadFile', { aliases: ['Read'] });
      const result = resolveAgentTools(custom({ tools: ['Read'] }), [reader]);
      expect(result.resolvedTools).toEqual([reader]);
      expect(result.validTools).toEqual(['Read']);
    });

    it('keeps ExitPlanMode for a plan-mode agent that lists it', () => {
      const result = resolveAgentTools(
        custom({ tools: ['ExitPlanMode'], permissionMode: 'plan' }),
        builtInTools(),
      );
      expect(names(result.resolvedTools)).toEqual(['ExitPlanMode']);
    });

    it('applies the custom-agent deny set only to agents that are not built in', () => {
      const pool = builtInTools();
      const options = { policy: { customAgentDisallowed: ['Bash'] } };
      expect(resolveAgentTools(custom({ tools: ['Bash'] }), pool, options).invalidTools).toEqual([
        'Bash',
      ]);
      expect(
        names(
          resolveAgentTools({ source: 'built-in', tools: ['Bash'] }, pool, options).resolvedTools,
        ),
      ).toEqual(['Bash']);
    });
  });

  describe('the Agent spec', () => {
    it('sets allowedAgentTypes and counts as valid without resolving for a sub-agent', () => {
      const result = resolveAgentTools(
        custom({ tools: ['Read', 'Agent(worker, researcher)'] }),
        builtInTools(),
      );
      expect(result.allowedAgentTypes).toEqual(['worker', 'researcher']);
      expect(result.validTools).toEqual(['Read', 'Agent(worker, researcher)']);
      expect(result.invalidTools).toEqual([]);
      expect(names(result.resolvedTools)).toEqual(['Read']);
    });

    it('reads Task(x) like Agent(x)', () => {
      const result = resolveAgentTools(custom({ tools: ['Task(worker)'] }), builtInTools());
      expect(result.allowedAgentTypes).toEqual(['worker']);
      expect(result.validTools).toEqual(['Task(worker)']);
    });

    it('resolves the Agent tool on the main thread, under either name', () => {
      for (const spec of ['Agent(worker)', 'Task(worker)', 'Agent', 'Task']) {
        const result = resolveAgentTools(custom({ tools: [spec] }), builtInTools(), {
          isMainThread: true,
        });
        expect(names(result.resolvedTools)).toEqual(['Agent']);
        expect(result.validTools).toEqual([spec]);
      }
    });

    it('resolves a legacy tool registered as Task for an Agent spec', () => {
      const legacy = fakeTool('Task');
      const result = resolveAgentTools(custom({ tools: ['Agent(x)'] }), [legacy], {
        isMainThread: true,
      });
      expect(result.resolvedTools).toEqual([legacy]);
    });

    it('leaves allowedAgentTypes unset for a bare Agent spec', () => {
      const result = resolveAgentTools(custom({ tools: ['Agent'] }), builtInTools());
      expect(result.allowedAgentTypes).toBeUndefined();
      expect(result.validTools).toEqual(['Agent']);
    });

    it('merges the types of several Agent specs without duplicates', () => {
      const result = resolveAgentTools(
        custom({ tools: ['Agent(a, b)', 'Task(b,c)', 'Agent( a )'] }),
        builtInTools(),
      );
      expect(result.allowedAgentTypes).toEqual(['a', 'b', 'c']);
    });

    it('resolves the Agent tool for an in-process teammate whose gates kept it', () => {
      const result = resolveAgentTools(custom({ tools: ['Agent(worker)'] }), builtInTools(), {
        isAsync: true,
        policy: { isInProcessTeammate: true, agentSwarmsEnabled: true },
      });
      expect(names(result.resolvedTools)).toEqual(['Agent']);
      expect(result.allowedAgentTypes).toEqual(['worker']);
    });
  });

  describe('disallowedTools', () => {
    it('removes tools before the wildcard applies', () => {
      const result = resolveAgentTools(
        custom({ disallowedTools: ['Bash', 'Write'] }),
        builtInTools(),
      );
      expect(names(result.resolvedTools)).not.toContain('Bash');
      expect(names(result.resolvedTools)).not.toContain('Write');
      expect(names(result.resolvedTools)).toContain('Read');
    });

    it('removes tools before an explicit list applies', () => {
      const result = resolveAgentTools(
        custom({ tools: ['Bash', 'Read'], disallowedTools: ['Bash'] }),
        builtInTools(),
      );
      expect(result.invalidTools).toEqual(['Bash']);
      expect(names(result.resolvedTools)).toEqual(['Read']);
    });

    it('removes the whole tool named by a spec with content', () => {
      const result = resolveAgentTools(
        custom({ disallowedTools: ['Bash(rm -rf *)'] }),
        builtInTools(),
      );
      expect(names(result.resolvedTools)).not.toContain('Bash');
    });

    it('matches aliases and the legacy Agent name', () => {
      const reader = fakeTool('ReadFile', { aliases: ['Read'] });
      const result = resolveAgentTools(
        custom({ disallowedTools: ['Read', 'Task'] }),
        [reader, agentTool(), fakeTool('Grep')],
        {
          isMainThread: true,
        },
      );
      expect(names(result.resolvedTools)).toEqual(['Grep']);
    });

    it('can remove MCP tools', () => {
      const pool = [fakeTool('mcp__docs__search'), fakeTool('mcp__docs__fetch')];
      const result = resolveAgentTools(custom({ disallowedTools: ['mcp__docs__fetch'] }), pool);
      expect(names(result.resolvedTools)).toEqual(['mcp__docs__search']);
    });

    it('removes every tool of an MCP server named as in permission rules', () => {
      const pool = [
        fakeTool('mcp__docs__search'),
        fakeTool('mcp__docs__fetch'),
        fakeTool('mcp__docs_v2__search'),
        fakeTool('mcp__my_db__query'),
        fakeTool('Read'),
      ];
      for (const spec of ['mcp__docs', 'mcp__docs__*']) {
        const result = resolveAgentTools(custom({ disallowedTools: [spec] }), pool);
        expect(names(result.resolvedTools)).toEqual([
          'mcp__docs_v2__search',
          'mcp__my_db__query',
          'Read',
        ]);
      }
      const underscored = resolveAgentTools(custom({ disallowedTools: ['mcp__my_db'] }), pool);
      expect(names(underscored.resolvedTools)).not.toContain('mcp__my_db__query');
    });
  });
});

const specName = fc.oneof(
  fc.constantFrom(...Object.values(TOOL_NAMES), '*', 'Nope'),
  fc.stringMatching(/^mcp__[a-z]{1,3}__[a-z]{1,3}$/),
  fc.constantFrom('Agent(a, b)', 'Task(c)', 'Bash(git *)', 'Read()'),
);
const arbitraryAgent = fc.record({
  source: fc.constantFrom('built-in' as const, 'projectSettings' as const, 'plugin' as const),
  tools: fc.option(fc.array(specName, { maxLength: 8 }), { nil: undefined }),
  disallowedTools: fc.option(fc.array(specName, { maxLength: 4 }), { nil: undefined }),
});
const arbitraryRunOptions = fc.record({ isAsync: fc.boolean(), isMainThread: fc.boolean() });

describe('resolveAgentTools properties', () => {
  it('resolves only available tools, each once, none of them disallowed', () => {
    fc.assert(
      fc.property(
        arbitraryAgent,
        arbitraryToolList,
        arbitraryRunOptions,
        (agent, pool, options) => {
          const result = resolveAgentTools(agent, pool, options);
          expect(new Set(result.resolvedTools).size).toBe(result.resolvedTools.length);
          for (const tool of result.resolvedTools) {
            expect(pool).toContain(tool);
            for (const spec of agent.disallowedTools ?? []) {
              const name = spec.replace(/\(.*\)$/, '');
              expect(toolMatchesSpecName(tool, name)).toBe(false);
            }
          }
        },
      ),
    );
  });

  it('sorts each distinct spec into exactly one of validTools and invalidTools', () => {
    fc.assert(
      fc.property(
        arbitraryAgent,
        arbitraryToolList,
        arbitraryRunOptions,
        (agent, pool, options) => {
          const result = resolveAgentTools(agent, pool, options);
          if (result.hasWildcard) return;
          const sorted = [...result.validTools, ...result.invalidTools];
          expect(new Set(sorted).size).toBe(sorted.length);
          expect(new Set(sorted)).toEqual(new Set(agent.tools));
        },
      ),
    );
  });

  it('never gives a sub-agent more than the gates allow', () => {
    fc.assert(
      fc.property(arbitraryAgent, arbitraryToolList, fc.boolean(), (agent, pool, isAsync) => {
        const gated = filterToolsForAgent({
          tools: pool,
          isBuiltIn: agent.source === 'built-in',
          isAsync,
        });
        for (const tool of resolveAgentTools(agent, pool, { isAsync }).resolvedTools) {
          expect(gated).toContain(tool);
        }
      }),
    );
  });

  it('resolves each tool of an explicit list from one of its valid specs', () => {
    fc.assert(
      fc.property(
        arbitraryAgent,
        arbitraryToolList,
        arbitraryRunOptions,
        (agent, pool, options) => {
          const result = resolveAgentTools(agent, pool, options);
          if (result.hasWildcard) return;
          const validNames = result.validTools.map((spec) => spec.replace(/\(.*\)$/, ''));
          for (const tool of result.resolvedTools) {
            expect(validNames.some((name) => toolMatchesSpecName(tool, name))).toBe(true);
          }
        },
      ),
    );
  });
});
