/**
 * The start of every tool name the MCP bridge of `@delegate/tools` gives the tools of the
 * server `serverName`: `mcp__<server>__`, with the server's name normalized as tool names
 * allow (every character outside `[a-zA-Z0-9_-]` becomes `_`, so `acme.tools` gives
 * `mcp__acme_tools__`).
 */
export function mcpToolNamePrefix(serverName: string): string {
  return `mcp__${serverName.replace(/[^a-zA-Z0-9_-]/g, '_')}__`;
}
