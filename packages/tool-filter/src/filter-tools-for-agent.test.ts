import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PermissionMode, TOOL_NAMES } from '@delegate/core';
import {
  agentTool,
  arbitraryToolList,
  builtInTools,
  fakeTool,
  type FakeTool,
} from './__fixtures__/fake-tools.js';
import {
  DEFAULT_ALL_AGENT_DISALLOWED_TOOLS,
  DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS,
  DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS,
} from './default-tool-sets.js';
import { filterToolsForAgent, type FilterToolsForAgentOptions } from './filter-tools-for-agent.js';
import { isAgentTool, isMcpTool, toolExemptFrom, toolInNameSet } from './tool-name-matching.js';

const names = (tools: readonly FakeTool[]): string[] => tools.map((tool) => tool.name);

describe('filterToolsForAgent', () => {
  describe('all-agents deny set', () => {
    it('removes the Agent tool and the main-thread-only tools from a sync sub-agent', () => {
      const result = filterToolsForAgent({ tools: builtInTools(), isBuiltIn: true });
      expect(names(result)).not.toContain('Agent');
      for (const removed of ['TaskOutput', 'TaskStop', 'ExitPlanMode', 'AskUserQuestion']) {
        expect(names(result)).not.toContain(removed);
      }
      for (const kept of [
        'Read',
        'Write',
        'Bash',
        'TodoWrite',
        'TaskCreate',
        'SendMessage',
        'Skill',
      ]) {
        expect(names(result)).toContain(kept);
      }
    });

    it('removes a tool registered under the legacy name Task', () => {
      const result = filterToolsForAgent({
        tools: [fakeTool('Task'), fakeTool('Read')],
        isBuiltIn: true,
      });
      expect(names(result)).toEqual(['Read']);
    });

    it('removes a tool whose alias is in the deny set', () => {
      const question = fakeTool('Question', { aliases: ['AskUserQuestion'] });
      const spawner = fakeTool('Spawn', { aliases: ['Task'] });
      const result = filterToolsForAgent({
        tools: [question, spawner, fakeTool('Grep')],
        isBuiltIn: true,
      });
      expect(names(result)).toEqual(['Grep']);
    });

    it('uses a replacement set from the policy', () => {
      const tools = [agentTool(), fakeTool('Bash'), fakeTool('Read')];
      const result = filterToolsForAgent({
        tools,
        isBuiltIn: true,
        policy: { allAgentDisallowed: ['Bash'], customAgentDisallowed: [] },
      });
      expect(names(result)).toEqual(['Agent', 'Read']);
    });

    it('refuses a policy set given as text, which would be read letter by letter', () => {
      const tools = [agentTool(), fakeTool('Read')];
      expect(() =>
        filterToolsForAgent({
          tools,
          isBuiltIn: true,
          policy: { allAgentDisallowed: 'Agent' as never },
        }),
      ).toThrow(
        /policy\.allAgentDisallowed must be a Set or an array of tool names, such as \['Agent'\], got the text "Agent"/,
      );
    });

    it('keeps input order', () => {
      const tools = ['Write', 'Read', 'Glob', 'Bash'].map((name) => fakeTool(name));
      expect(names(filterToolsForAgent({ tools, isBuiltIn: false }))).toEqual([
        'Write',
        'Read',
        'Glob',
        'Bash',
      ]);
    });
  });

  describe('MCP gate', () => {
    it('keeps mcp__ tools for async custom agents even when a set names them', () => {
      const mcp = fakeTool('mcp__github__create_issue');
      const result = filterToolsForAgent({
        tools: [mcp, fakeTool('Unknown')],
        isBuiltIn: false,
        isAsync: true,
        policy: { allAgentDisallowed: [mcp.name], customAgentDisallowed: [mcp.name] },
      });
      expect(result).toEqual([mcp]);
    });

    it('trusts the mcp__ name, but not from a tool that says it is not MCP', () => {
      const spoof = fakeTool('mcp__local__deploy', { isMcp: false });
      const bridged = fakeTool('mcp__github__create_issue', { isMcp: true });
      const unprefixed = fakeTool('github_create_issue', { isMcp: true });
      const result = filterToolsForAgent({
        tools: [spoof, bridged, unprefixed],
        isBuiltIn: false,
        isAsync: true,
      });
      expect(result).toEqual([bridged]);
    });

    it('gives no MCP pass to the Agent tool hiding behind an mcp__ name', () => {
      const spoofs = [
        fakeTool('mcp__x', { aliases: ['Agent'] }),
        fakeTool('mcp__srv__spawn', { aliases: ['Task'], isMcp: true }),
        fakeTool('mcp__srv__ask', { aliases: ['AskUserQuestion'] }),
      ];
      for (const isAsync of [false, true]) {
        expect(filterToolsForAgent({ tools: spoofs, isBuiltIn: true, isAsync })).toEqual([]);
      }
    });
  });

  describe('ExitPlanMode pass', () => {
    it('keeps ExitPlanMode in plan mode, even for an async custom agent', () => {
      const tools = [fakeTool('ExitPlanMode'), fakeTool('Read')];
      const result = filterToolsForAgent({
        tools,
        isBuiltIn: false,
        isAsync: true,
        permissionMode: 'plan',
      });
      expect(names(result)).toEqual(['ExitPlanMode', 'Read']);
    });

    it('gives no plan-mode pass to the Agent tool claiming the alias ExitPlanMode', () => {
      const disguised = [
        fakeTool('Agent', { aliases: ['ExitPlanMode'] }),
        fakeTool('ExitPlanMode', { aliases: ['Task'] }),
        fakeTool('AskUserQuestion', { aliases: ['ExitPlanMode'] }),
      ];
      for (const isAsync of [false, true]) {
        const result = filterToolsForAgent({
          tools: disguised,
          isBuiltIn: true,
          isAsync,
          permissionMode: 'plan',
        });
        expect(result).toEqual([]);
      }
    });

    it('removes ExitPlanMode in every other mode', () => {
      for (const mode of PermissionMode.options.filter((option) => option !== 'plan')) {
        const result = filterToolsForAgent({
          tools: [fakeTool('ExitPlanMode')],
          isBuiltIn: true,
          permissionMode: mode,
        });
        expect(result).toEqual([]);
      }
    });
  });

  describe('custom-agents deny set', () => {
    it('applies only to agents that are not built in', () => {
      const tools = [fakeTool('Bash'), fakeTool('Read')];
      const policy = { customAgentDisallowed: ['Bash'] };
      expect(names(filterToolsForAgent({ tools, isBuiltIn: false, policy }))).toEqual(['Read']);
      expect(names(filterToolsForAgent({ tools, isBuiltIn: true, policy }))).toEqual([
        'Bash',
        'Read',
      ]);
    });
  });

  describe('async allow-list', () => {
    it('keeps only the allow-listed tools and MCP tools for async agents', () => {
      const mcp = fakeTool('mcp__db__query');
      const result = filterToolsForAgent({
        tools: [...builtInTools(), mcp, fakeTool('Custom')],
        isBuiltIn: true,
        isAsync: true,
      });
      expect(names(result).sort()).toEqual([...DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS, mcp.name].sort());
    });

    it('honours a replacement allow-list', () => {
      const tools = [fakeTool('Read'), fakeTool('Grep'), fakeTool('Bash')];
      const result = filterToolsForAgent({
        tools,
        isBuiltIn: true,
        isAsync: true,
        policy: { asyncAllowed: new Set(['Grep']) },
      });
      expect(names(result)).toEqual(['Grep']);
    });

    it('matches the allow-list through aliases', () => {
      const reader = fakeTool('ReadFile', { aliases: ['Read'] });
      expect(filterToolsForAgent({ tools: [reader], isBuiltIn: true, isAsync: true })).toEqual([
        reader,
      ]);
    });
  });

  describe('in-process teammate exemption', () => {
    const teammateTools = (): FakeTool[] =>
      ['TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate', 'SendMessage'].map((name) =>
        fakeTool(name),
      );

    it('keeps the Agent tool and the task coordination tools for an async teammate with the gate on', () => {
      const tools = [agentTool(), ...teammateTools(), fakeTool('TaskStop'), fakeTool('Read')];
      const result = filterToolsForAgent({
        tools,
        isBuiltIn: false,
        isAsync: true,
        policy: { isInProcessTeammate: true, agentSwarmsEnabled: true },
      });
      expect(names(result)).toEqual([
        'Agent',
        'TaskCreate',
        'TaskGet',
        'TaskList',
        'TaskUpdate',
        'SendMessage',
        'Read',
      ]);
    });

    it('gives nothing extra when the gate is off or the agent is not a teammate', () => {
      const tools = [agentTool(), ...teammateTools(), fakeTool('Read')];
      for (const policy of [
        { isInProcessTeammate: true, agentSwarmsEnabled: false },
        { isInProcessTeammate: false, agentSwarmsEnabled: true },
        {},
      ]) {
        expect(
          names(filterToolsForAgent({ tools, isBuiltIn: false, isAsync: true, policy })),
        ).toEqual(['Read']);
      }
    });

    it('gives no teammate pass to a denied tool claiming a teammate alias', () => {
      const disguised = [
        fakeTool('AskUserQuestion', { aliases: ['SendMessage'] }),
        fakeTool('TaskStop', { aliases: ['TaskList'] }),
      ];
      for (const isAsync of [false, true]) {
        const result = filterToolsForAgent({
          tools: disguised,
          isBuiltIn: true,
          isAsync,
          policy: { isInProcessTeammate: true, agentSwarmsEnabled: true },
        });
        expect(result).toEqual([]);
      }
    });

    it('uses a replacement teammate set', () => {
      const tools = [agentTool(), ...teammateTools()];
      const result = filterToolsForAgent({
        tools,
        isBuiltIn: false,
        isAsync: true,
        policy: {
          isInProcessTeammate: true,
          agentSwarmsEnabled: true,
          teammateAllowed: ['SendMessage'],
        },
      });
      expect(names(result)).toEqual(['SendMessage']);
    });
  });

  describe('tools that need a person', () => {
    it('never reach an async agent, whatever gate would let them through', () => {
      const tools = [
        fakeTool('Read', { interactive: true }),
        fakeTool('mcp__chat__ask', { interactive: true }),
        fakeTool('ExitPlanMode', { interactive: true }),
        fakeTool('SendMessage', { interactive: true }),
        fakeTool('Grep', { interactive: false }),
      ];
      const result = filterToolsForAgent({
        tools,
        isBuiltIn: true,
        isAsync: true,
        permissionMode: 'plan',
        policy: { isInProcessTeammate: true, agentSwarmsEnabled: true },
      });
      expect(names(result)).toEqual(['Grep']);
    });

    it('stay available to a sync agent', () => {
      const tools = [fakeTool('Read', { interactive: true })];
      expect(filterToolsForAgent({ tools, isBuiltIn: true })).toEqual(tools);
    });
  });
});

const arbitraryOptions = fc.record({
  isBuiltIn: fc.boolean(),
  isAsync: fc.boolean(),
  permissionMode: fc.option(fc.constantFrom(...PermissionMode.options), { nil: undefined }),
  isInProcessTeammate: fc.boolean(),
  agentSwarmsEnabled: fc.boolean(),
});

type ArbitraryOptions = typeof arbitraryOptions extends fc.Arbitrary<infer O> ? O : never;

const toFilterOptions = (
  tools: FakeTool[],
  options: ArbitraryOptions,
): FilterToolsForAgentOptions<FakeTool> => ({
  tools,
  isBuiltIn: options.isBuiltIn,
  isAsync: options.isAsync,
  permissionMode: options.permissionMode,
  policy: {
    isInProcessTeammate: options.isInProcessTeammate,
    agentSwarmsEnabled: options.agentSwarmsEnabled,
  },
});

const needsPerson = (tool: FakeTool): boolean => tool.requiresUserInteraction?.() === true;

describe('filterToolsForAgent properties', () => {
  it('returns a subsequence of its input', () => {
    fc.assert(
      fc.property(arbitraryToolList, arbitraryOptions, (tools, options) => {
        const result = filterToolsForAgent(toFilterOptions(tools, options));
        let cursor = 0;
        for (const tool of result) {
          cursor = tools.indexOf(tool, cursor) + 1;
          expect(cursor).toBeGreaterThan(0);
        }
      }),
    );
  });

  it('keeps every MCP tool (that needs no person, or for a sync agent)', () => {
    fc.assert(
      fc.property(arbitraryToolList, arbitraryOptions, (tools, options) => {
        const result = filterToolsForAgent(toFilterOptions(tools, options));
        for (const tool of tools) {
          if (isMcpTool(tool) && !(options.isAsync && needsPerson(tool))) {
            expect(result).toContain(tool);
          }
        }
      }),
    );
  });

  it('never hands the Agent tool (or Task) to a sub-agent unless the teammate exemption applies', () => {
    fc.assert(
      fc.property(arbitraryToolList, arbitraryOptions, (tools, options) => {
        const teammate = options.isInProcessTeammate && options.agentSwarmsEnabled;
        const result = filterToolsForAgent(toFilterOptions(tools, options));
        // Whatever its name, aliases or MCP trait, the Agent tool never gets through.
        const agentTools = result.filter((tool) => isAgentTool(tool));
        if (!teammate) expect(agentTools).toEqual([]);
      }),
    );
  });

  it('gives async agents only allow-listed, MCP, plan-exit and teammate tools, none needing a person', () => {
    fc.assert(
      fc.property(arbitraryToolList, arbitraryOptions, (tools, options) => {
        const result = filterToolsForAgent(toFilterOptions(tools, { ...options, isAsync: true }));
        const teammate = options.isInProcessTeammate && options.agentSwarmsEnabled;
        for (const tool of result) {
          expect(needsPerson(tool)).toBe(false);
          const allowed =
            isMcpTool(tool) ||
            toolInNameSet(tool, DEFAULT_ASYNC_AGENT_ALLOWED_TOOLS) ||
            (options.permissionMode === 'plan' &&
              toolExemptFrom(tool, new Set([TOOL_NAMES.exitPlanMode]), [])) ||
            (teammate && toolInNameSet(tool, DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS));
          expect(allowed).toBe(true);
        }
      }),
    );
  });

  it('never hands a sub-agent a tool that a deny set names under any of its names', () => {
    fc.assert(
      fc.property(arbitraryToolList, arbitraryOptions, (tools, options) => {
        const teammate = options.isInProcessTeammate && options.agentSwarmsEnabled;
        const result = filterToolsForAgent(toFilterOptions(tools, options));
        for (const tool of result) {
          if (isMcpTool(tool)) continue;
          const exempt =
            (options.permissionMode === 'plan' &&
              toolInNameSet(tool, new Set([TOOL_NAMES.exitPlanMode]))) ||
            (teammate && toolInNameSet(tool, DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS));
          const names = [tool.name, ...(tool.aliases ?? [])];
          // A deny-set name may only be present when the tool as a whole was exempted,
          // and then every such name must be covered by the exemption.
          for (const name of names) {
            if (!toolInNameSet({ name }, DEFAULT_ALL_AGENT_DISALLOWED_TOOLS)) continue;
            expect(exempt).toBe(true);
            const covered =
              (options.permissionMode === 'plan' && name === TOOL_NAMES.exitPlanMode) ||
              (teammate && toolInNameSet({ name }, DEFAULT_IN_PROCESS_TEAMMATE_ALLOWED_TOOLS));
            expect(covered).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('changes nothing when applied twice', () => {
    fc.assert(
      fc.property(arbitraryToolList, arbitraryOptions, (tools, options) => {
        const once = filterToolsForAgent(toFilterOptions(tools, options));
        const twice = filterToolsForAgent(toFilterOptions(once, options));
        expect(twice).toEqual(once);
      }),
    );
  });
});
