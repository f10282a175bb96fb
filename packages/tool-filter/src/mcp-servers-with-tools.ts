import { type Tool } from '@delegate/core';
import { MCP_TOOL_PREFIX } from './tool-name-matching.js';

/** Server names of the `mcp__<server>__<tool>` tools, unique, in order of first appearance. */
export function mcpServersWithTools(tools: readonly Pick<Tool, 'name'>[]): string[] {
  const servers: string[] = [];
  for (const tool of tools) {
    if (!tool.name.startsWith(MCP_TOOL_PREFIX)) continue;
    const server = tool.name.split('__')[1];
    if (server !== undefined && server !== '' && !servers.includes(server)) servers.push(server);
  }
  return servers;
}
