import type { Tool } from './tool.js';

const MCP_PREFIX = 'mcp__';

/**
 * What the tool name of a permission rule may be: a tool name (a letter, then letters,
 * digits, `_` and `-`; `mcp__<server>` also names every tool of that MCP server), or a whole
 * MCP server written `mcp__<server>__*`. Nothing else can match a tool: another wildcard
 * (`*`, `Bash*`, `mcp__*`, `mcp__github__get*`) names none.
 */
export const PERMISSION_RULE_TOOL_NAME_PATTERN =
  /^(?:[A-Za-z][A-Za-z0-9_-]*|mcp__[A-Za-z0-9_-]+__\*)$/;

/**
 * True when the rule name `ruleName` (of a permission rule or a `disallowedTools` entry)
 * names the tool called `toolName`: the same name, or, for `mcp__<server>` and
 * `mcp__<server>__*`, every `mcp__<server>__<tool>` tool of that MCP server.
 */
export function ruleNameMatchesToolName(ruleName: string, toolName: string): boolean {
  if (toolName === ruleName) return true;
  const server = ruleName.endsWith('__*') ? ruleName.slice(0, -3) : ruleName;
  return server.startsWith(MCP_PREFIX) && toolName.startsWith(`${server}__`);
}

/**
 * True when the rule name `ruleName` names the tool, through its name or one of its aliases
 * (see `ruleNameMatchesToolName`: `mcp__github` and `mcp__github__*` name every tool of the
 * `github` MCP server).
 */
export function toolMatchesRuleName(
  tool: Pick<Tool, 'name' | 'aliases'>,
  ruleName: string,
): boolean {
  if (ruleNameMatchesToolName(ruleName, tool.name)) return true;
  return tool.aliases?.some((alias) => ruleNameMatchesToolName(ruleName, alias)) ?? false;
}

/**
 * Why a permission rule naming `toolName` (with `ruleContent`, the text in its parentheses)
 * can never match a tool, in words for an error message; undefined when it can. A rule
 * that matches nothing would be kept silently (a deny rule then denies nothing), so callers
 * refuse it with this reason.
 */
export function permissionRuleProblem(value: {
  toolName: string;
  ruleContent?: string | undefined;
}): string | undefined {
  const { toolName, ruleContent } = value;
  if (!PERMISSION_RULE_TOOL_NAME_PATTERN.test(toolName)) {
    if (/[()]/.test(toolName)) {
      return 'its parentheses do not pair up: content goes in one pair at the end, as Tool(content)';
    }
    if (toolName.includes('*')) {
      return `"${toolName.slice(0, 80)}" has a wildcard, which matches no tool name: a tool is named in full, and only a whole MCP server takes one, as "mcp__<server>__*" (or "mcp__<server>")`;
    }
    return `"${toolName.slice(0, 80)}" is not a tool name: a letter, then letters, digits, "_" and "-"`;
  }
  const content = ruleContent?.trim() ?? '';
  if (toolName.endsWith('__*') && content !== '' && content !== '*') {
    return `"${toolName}" names every tool of an MCP server and takes no content in parentheses`;
  }
  return undefined;
}
