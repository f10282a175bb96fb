/** Reduces a server or tool name to the characters tool names allow (`[a-zA-Z0-9_-]`). */
export function normalizeMcpName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** Builds the name an MCP tool is exposed under: `mcp__<server>__<tool>`, both parts normalized. */
export function buildMcpToolName(serverName: string, toolName: string): string {
  return `mcp__${normalizeMcpName(serverName)}__${normalizeMcpName(toolName)}`;
}
