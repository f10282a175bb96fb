import {
  type AgentDefinition,
  checkArray,
  checkObject,
  checkOptionalObject,
  checkString,
} from '@delegate/core';
import { filterToolsForAgent } from './filter-tools-for-agent.js';
import { permissionRuleValueFromString } from './permission-rule-value-from-string.js';
import { type ToolFilterPolicy } from './tool-filter-policy.js';
import {
  disallowedNameRemoves,
  isAgentToolName,
  toolMatchesSpecName,
  type FilterableTool,
} from './tool-name-matching.js';

/** The fields of an agent definition that decide its tools. */
export type AgentToolFields = Pick<
  AgentDefinition,
  'tools' | 'disallowedTools' | 'source' | 'permissionMode'
>;

/** Facts about the run that change which tools an agent gets. */
export type ResolveAgentToolsOptions = {
  /** True for background agents (async allow-list applies). */
  isAsync?: boolean | undefined;
  /** True for the main thread: its pool is already assembled, so the gates are skipped. */
  isMainThread?: boolean | undefined;
  /** Replacement sets and teammate facts, passed to `filterToolsForAgent`. */
  policy?: ToolFilterPolicy | undefined;
};

/** The tools an agent ends up with and how its `tools` list was read. */
export type ResolvedAgentTools<T extends FilterableTool = FilterableTool> = {
  /** True when `tools` was absent or exactly `['*']`. */
  hasWildcard: boolean;
  /** Specs from `tools` that named an available tool (empty for a wildcard). */
  validTools: string[];
  /** Specs from `tools` that named no available tool (empty for a wildcard). */
  invalidTools: string[];
  /** The tools the agent gets, without duplicates, in the order they were first named. */
  resolvedTools: T[];
  /** Agent types the agent may spawn, from `Agent(a, b)` specs; absent when not restricted. */
  allowedAgentTypes?: string[];
};

function pushUnique<V>(list: V[], value: V): void {
  if (!list.includes(value)) list.push(value);
}

// A `disallowedTools` name removes a tool by its name or alias, or by its MCP server.
function deniesTool(tool: FilterableTool, name: string): boolean {
  return toolMatchesSpecName(tool, name) || disallowedNameRemoves(name, tool.name);
}

const WHERE = 'resolveAgentTools()';

function checkSpecs(option: string, specs: unknown): void {
  if (specs === undefined) return;
  checkArray(WHERE, option, specs);
  (specs as unknown[]).forEach((spec, index) => checkString(WHERE, `${option}[${index}]`, spec));
}

function checkArguments(agent: unknown, availableTools: unknown, options: unknown): void {
  checkObject(WHERE, 'agent', agent);
  checkSpecs('agent.tools', (agent as AgentToolFields).tools);
  checkSpecs('agent.disallowedTools', (agent as AgentToolFields).disallowedTools);
  checkArray(WHERE, 'availableTools', availableTools);
  checkOptionalObject(WHERE, 'options', options);
}

/**
 * Works out the tools of one agent./**
 * Works out the tools of one agent. Sub-agents first pass through `filterToolsForAgent`
 * (the main thread skips it); then every tool named in `disallowedTools` is removed (by
 * the tool name of each spec, alias-aware); then `tools` is applied: absent or `['*']`
 * keeps everything left, otherwise each spec resolves to a tool or lands in
 * `invalidTools`. `Agent(a, b)` (or `Task(a, b)`) sets `allowedAgentTypes`; for a
 * sub-agent whose gates removed the Agent tool, that spec counts as valid without
 * resolving to a tool.
 */
export function resolveAgentTools<T extends FilterableTool>(
  agent: AgentToolFields,
  availableTools: readonly T[],
  options: ResolveAgentToolsOptions = {},
): ResolvedAgentTools<T> {
  checkArguments(agent, availableTools, options);
  const isMainThread = options.isMainThread ?? false;
  const gatedTools = isMainThread
    ? [...availableTools]
    : filterToolsForAgent({
        tools: availableTools,
        isBuiltIn: agent.source === 'built-in',
        isAsync: options.isAsync,
        permissionMode: agent.permissionMode,
        policy: options.policy,
      });

  const disallowedNames = [
    ...new Set(
      (agent.disallowedTools ?? []).map((spec) => permissionRuleValueFromString(spec).toolName),
    ),
  ];
  const allowedTools =
    disallowedNames.length === 0
      ? gatedTools
      : gatedTools.filter((tool) => !disallowedNames.some((name) => deniesTool(tool, name)));

  const specs = agent.tools;
  if (specs === undefined || (specs.length === 1 && specs[0]?.trim() === '*')) {
    return { hasWildcard: true, validTools: [], invalidTools: [], resolvedTools: allowedTools };
  }

  // Index by name and alias so each spec is one lookup; the first tool to claim a name wins.
  const toolsByName = new Map<string, T>();
  for (const tool of allowedTools) {
    for (const name of [tool.name, ...(tool.aliases ?? [])]) {
      if (!toolsByName.has(name)) toolsByName.set(name, tool);
    }
  }
  const findTool = (name: string): T | undefined =>
    toolsByName.get(name) ??
    (isAgentToolName(name)
      ? allowedTools.find((tool) => toolMatchesSpecName(tool, name))
      : undefined);

  const validTools: string[] = [];
  const invalidTools: string[] = [];
  const resolvedTools: T[] = [];
  let allowedAgentTypes: string[] | undefined;

  for (const spec of specs) {
    const { toolName, ruleContent } = permissionRuleValueFromString(spec);
    if (isAgentToolName(toolName)) {
      if (ruleContent !== undefined) {
        allowedAgentTypes ??= [];
        for (const agentType of ruleContent.split(',')) {
          const trimmed = agentType.trim();
          if (trimmed !== '') pushUnique(allowedAgentTypes, trimmed);
        }
      }
    }
    const tool = findTool(toolName);
    if (tool === undefined && !isMainThread && isAgentToolName(toolName)) {
      // The gates took the Agent tool away; the spec still matters for allowedAgentTypes.
      pushUnique(validTools, spec);
      continue;
    }
    if (tool === undefined) {
      pushUnique(invalidTools, spec);
      continue;
    }
    pushUnique(validTools, spec);
    pushUnique(resolvedTools, tool);
  }

  const result: ResolvedAgentTools<T> = {
    hasWildcard: false,
    validTools,
    invalidTools,
    resolvedTools,
  };
  if (allowedAgentTypes !== undefined) result.allowedAgentTypes = allowedAgentTypes;
  return result;
}
