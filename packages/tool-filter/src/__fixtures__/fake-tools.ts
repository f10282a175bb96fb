import fc from 'fast-check';
import { TOOL_NAMES } from '@delegate/core';
import { type FilterableTool } from '../tool-name-matching.js';

/** A minimal tool for filter tests: a name, optional aliases, optional interaction flag. */
export type FakeTool = FilterableTool & { readonly id: number };

let nextId = 0;

/** Creates a fake tool; every call gives a distinct object (and id). */
export function fakeTool(
  name: string,
  options: { aliases?: readonly string[]; interactive?: boolean; isMcp?: boolean } = {},
): FakeTool {
  const base: FakeTool = { id: nextId++, name };
  const tool = options.isMcp === undefined ? base : { ...base, isMcp: options.isMcp };
  const withAliases = options.aliases === undefined ? tool : { ...tool, aliases: options.aliases };
  if (options.interactive === undefined) return withAliases;
  const interactive = options.interactive;
  return { ...withAliases, requiresUserInteraction: () => interactive };
}

/** The Agent tool as the runtime registers it: name `Agent`, legacy alias `Task`. */
export function agentTool(): FakeTool {
  return fakeTool(TOOL_NAMES.agent, { aliases: [TOOL_NAMES.agentLegacy] });
}

/** One fake tool per built-in name, with the Agent tool carrying its `Task` alias. */
export function builtInTools(): FakeTool[] {
  return Object.values(TOOL_NAMES)
    .filter((name) => name !== TOOL_NAMES.agentLegacy)
    .map((name) => (name === TOOL_NAMES.agent ? agentTool() : fakeTool(name)));
}

const builtInNames = Object.values(TOOL_NAMES);

const identifier = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,11}$/);

const mcpName = fc.tuple(identifier, identifier).map(([server, tool]) => `mcp__${server}__${tool}`);

/**
 * Any fake tool: built-in names, built-in names as aliases, `mcp__` tools, random names,
 * and spoofs (an `mcp__` or built-in name that claims built-in aliases, an `isMcp` trait
 * that contradicts the name).
 */
export const arbitraryTool: fc.Arbitrary<FakeTool> = fc.oneof(
  fc
    .record({
      name: fc.oneof(fc.constantFrom(...builtInNames), mcpName),
      aliases: fc.array(fc.constantFrom(...builtInNames), { minLength: 1, maxLength: 2 }),
      isMcp: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map(({ name, aliases, isMcp }) =>
      fakeTool(name, isMcp === undefined ? { aliases } : { aliases, isMcp }),
    ),
  fc
    .tuple(mcpName, fc.boolean())
    .map(([name, isMcp]) => fakeTool(name, { isMcp })),
  fc.constantFrom(...builtInNames).map((name) => fakeTool(name)),
  fc.constant(null).map(() => agentTool()),
  fc
    .tuple(identifier, fc.constantFrom(...builtInNames))
    .map(([name, alias]) => fakeTool(name, { aliases: [alias] })),
  fc.tuple(identifier, identifier).map(([server, tool]) => fakeTool(`mcp__${server}__${tool}`)),
  identifier.map((name) => fakeTool(name)),
  fc
    .tuple(fc.oneof(fc.constantFrom(...builtInNames), identifier), fc.boolean())
    .map(([name, interactive]) => fakeTool(name, { interactive })),
);

/** A list of fake tools mixing every kind above. */
export const arbitraryToolList: fc.Arbitrary<FakeTool[]> = fc.array(arbitraryTool, { maxLength: 30 });
