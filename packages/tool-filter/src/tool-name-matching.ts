import { TOOL_NAMES, type Tool } from '@delegate/core';

/** The parts of a tool the filters look at; real `Tool` objects satisfy it. */
export type FilterableTool = Pick<Tool, 'name' | 'aliases' | 'requiresUserInteraction'>;

/** Prefix of tools bridged from an MCP server (`mcp__<server>__<tool>`). */
export const MCP_TOOL_PREFIX = 'mcp__';

/** True when the tool was bridged from an MCP server (its name starts with `mcp__`). */
export function isMcpToolName(name: string): boolean {
  return name.startsWith(MCP_TOOL_PREFIX);
}

/** True when `name` is the Agent tool's name or its legacy alias `Task`. */
export function isAgentToolName(name: string): boolean {
  return name === TOOL_NAMES.agent || name === TOOL_NAMES.agentLegacy;
}

/** True when the tool is the Agent tool, under its name, its legacy name or an alias. */
export function isAgentTool(tool: Pick<Tool, 'name' | 'aliases'>): boolean {
  return isAgentToolName(tool.name) || (tool.aliases?.some(isAgentToolName) ?? false);
}

/**
 * True when the tool is called `name` (directly or through an alias); `Agent` and `Task`
 * are treated as one name, so a rule written either way reaches the Agent tool.
 */
export function toolMatchesSpecName(tool: Pick<Tool, 'name' | 'aliases'>, name: string): boolean {
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
  if (names.has(tool.name)) return true;
  if (tool.aliases?.some((alias) => names.has(alias)) ?? false) return true;
  return (names.has(TOOL_NAMES.agent) || names.has(TOOL_NAMES.agentLegacy)) && isAgentTool(tool);
}
