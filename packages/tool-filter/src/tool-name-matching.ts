import {
  TOOL_NAMES,
  type Tool,
  checkArray,
  checkString,
  ruleNameMatchesToolName,
} from '@delegate/core';
import { checkNameSet, checkTool } from './check-argument.js';

/** The parts of a tool the filters look at; real `Tool` objects satisfy it. */
export type FilterableTool = Pick<Tool, 'name' | 'aliases' | 'requiresUserInteraction' | 'isMcp'>;

/** Prefix of tools bridged from an MCP server (`mcp__<server>__<tool>`). */
export const MCP_TOOL_PREFIX = 'mcp__';

/** True when the tool was bridged from an MCP server (its name starts with `mcp__`). */
export function isMcpToolName(name: string): boolean {
  checkString('isMcpToolName()', 'name', name);
  return name.startsWith(MCP_TOOL_PREFIX);
}

/**
 * True when the tool counts as an MCP tool for the MCP pass and for MCP server lists: its
 * name starts with `mcp__`, it does not declare `isMcp: false`, and it claims no alias
 * outside the `mcp__` namespace. The name decides (as the runtime names every bridged
 * tool `mcp__<server>__<tool>`); the trait and the aliases can only take the pass away,
 * so a local tool named `mcp__x`, or one that also answers to `Agent`, gets no pass.
 */
export function isMcpTool(tool: Pick<Tool, 'name' | 'aliases' | 'isMcp'>): boolean {
  checkTool('isMcpTool()', 'tool', tool);
  if (tool.aliases !== undefined) checkArray('isMcpTool()', 'tool.aliases', tool.aliases);
  if (!isMcpToolName(tool.name) || tool.isMcp === false) return false;
  return tool.aliases?.every(isMcpToolName) ?? true;
}

/** True when `name` is the Agent tool's name or its legacy alias `Task`. */
export function isAgentToolName(name: string): boolean {
  return name === TOOL_NAMES.agent || name === TOOL_NAMES.agentLegacy;
}

/** True when the tool is the Agent tool, under its name, its legacy name or an alias. */
export function isAgentTool(tool: Pick<Tool, 'name' | 'aliases'>): boolean {
  checkTool('isAgentTool()', 'tool', tool);
  return isAgentToolName(tool.name) || (tool.aliases?.some(isAgentToolName) ?? false);
}

/**
 * True when the tool is called `name` (directly or through an alias); `Agent` and `Task`
 * are treated as one name, so a rule written either way reaches the Agent tool.
 */
export function toolMatchesSpecName(tool: Pick<Tool, 'name' | 'aliases'>, name: string): boolean {
  checkTool('toolMatchesSpecName()', 'tool', tool);
  checkString('toolMatchesSpecName()', 'name', name);
  if (tool.name === name || (tool.aliases?.includes(name) ?? false)) return true;
  return isAgentToolName(name) && isAgentTool(tool);
}

/**
 * True when the tool's name or any of its aliases is in `names`; a set naming `Agent` or
 * `Task` holds the Agent tool under either name.
 */
export function toolInNameSet(
  tool: Pick<Tool, 'name' | 'aliases'>,
  names: ReadonlySet<string>,
): boolean {
  checkTool('toolInNameSet()', 'tool', tool);
  checkNameSet('toolInNameSet()', 'names', names);
  return toolNames(tool).some((name) => nameInSet(name, names));
}

/** True when `name` is in `names`; `Agent` and `Task` count as one name. */
function nameInSet(name: string, names: ReadonlySet<string>): boolean {
  if (names.has(name)) return true;
  return (
    isAgentToolName(name) && (names.has(TOOL_NAMES.agent) || names.has(TOOL_NAMES.agentLegacy))
  );
}

/** The tool's name followed by its aliases. */
function toolNames(tool: Pick<Tool, 'name' | 'aliases'>): readonly string[] {
  return tool.aliases === undefined ? [tool.name] : [tool.name, ...tool.aliases];
}

/**
 * True when the tool is in `exempt` and none of its other names (name or alias) is in
 * one of `denied`. An exemption is granted to a tool, not to one of its names: a tool
 * called `Agent` that also claims the alias `ExitPlanMode` must not slip through the
 * plan-mode pass under the alias while its own name is denied.
 */
export function toolExemptFrom(
  tool: Pick<Tool, 'name' | 'aliases'>,
  exempt: ReadonlySet<string>,
  denied: readonly ReadonlySet<string>[],
): boolean {
  checkTool('toolExemptFrom()', 'tool', tool);
  checkNameSet('toolExemptFrom()', 'exempt', exempt);
  checkArray('toolExemptFrom()', 'denied', denied);
  const names = toolNames(tool);
  if (!names.some((name) => nameInSet(name, exempt))) return false;
  return !names.some(
    (name) => !nameInSet(name, exempt) && denied.some((set) => nameInSet(name, set)),
  );
}

/**
 * True when the `disallowedTools` name `name` removes a tool called `toolName`: the same
 * name, or, as in permission rules, its whole MCP server (`mcp__github` or `mcp__github__*`
 * removes every `mcp__github__…` tool). The runtime's permission rules match with the same
 * function of `@delegate/core` (`ruleNameMatchesToolName`).
 */
export function disallowedNameRemoves(name: string, toolName: string): boolean {
  checkString('disallowedNameRemoves()', 'name', name);
  checkString('disallowedNameRemoves()', 'toolName', toolName);
  return ruleNameMatchesToolName(name, toolName);
}
