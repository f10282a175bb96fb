import { type Tool, checkArray } from '@delegate/core';
import { checkTool } from './check-argument.js';
import { isMcpTool } from './tool-name-matching.js';

/**
 * Server names of the `mcp__<server>__<tool>` tools, unique, in order of first
 * appearance. Only tools that `isMcpTool` accepts count, so a local tool named
 * `mcp__github__x` (declaring `isMcp: false`) cannot satisfy a required `github` server.
 */
export function mcpServersWithTools(
  tools: readonly Pick<Tool, 'name' | 'aliases' | 'isMcp'>[],
): string[] {
  checkArray('mcpServersWithTools()', 'tools', tools);
  const servers: string[] = [];
  for (const [index, tool] of tools.entries()) {
    checkTool('mcpServersWithTools()', `tools[${index}]`, tool);
    if (!isMcpTool(tool)) continue;
    const server = tool.name.split('__')[1];
    if (server !== undefined && server !== '' && !servers.includes(server)) servers.push(server);
  }
  return servers;
}
