import {
  type Tool,
  checkArray,
  checkOptionalArray,
  checkString,
  mcpToolNamePrefix,
} from '@delegate/core';
import { checkTool } from './check-argument.js';
import { isMcpTool } from './tool-name-matching.js';

const WHERE = 'mcpServersWithTools()';

/**
 * The configured server whose tools are named like `toolName`: the one with the longest
 * `mcp__<server>__` prefix of it, so the tools of `gh__ent` belong to `gh__ent`, not to `gh`.
 */
function ownerOf(
  toolName: string,
  prefixes: readonly { server: string; prefix: string }[],
): string | undefined {
  let owner: { server: string; prefix: string } | undefined;
  for (const entry of prefixes) {
    if (!toolName.startsWith(entry.prefix)) continue;
    if (owner === undefined || entry.prefix.length > owner.prefix.length) owner = entry;
  }
  return owner?.server;
}

/**
 * Names of the MCP servers that have tools, unique, in order of first appearance. Only tools
 * that `isMcpTool` accepts count, so a local tool named `mcp__github__x` (declaring
 * `isMcp: false`) cannot satisfy a required `github` server.
 *
 * Tool names hold a server's name normalized (`acme.tools` becomes `mcp__acme_tools__…`) and
 * cannot tell where it ends (`mcp__gh__ent__search` may be server `gh__ent`). Pass the
 * servers' names as configured (`configuredServers`, such as `AppState.mcp.clients`' names)
 * and each tool counts for the configured server it was named after, under that name; a tool
 * of no configured server, and every tool without the list, gives the server name read from
 * its own name (the part after `mcp__`, up to the next `__`).
 */
export function mcpServersWithTools(
  tools: readonly Pick<Tool, 'name' | 'aliases' | 'isMcp'>[],
  configuredServers?: readonly string[],
): string[] {
  checkArray(WHERE, 'tools', tools);
  checkOptionalArray(WHERE, 'configuredServers', configuredServers);
  const prefixes = (configuredServers ?? []).map((server, index) => {
    checkString(WHERE, `configuredServers[${index}]`, server);
    return { server, prefix: mcpToolNamePrefix(server) };
  });
  const servers: string[] = [];
  for (const [index, tool] of tools.entries()) {
    checkTool(WHERE, `tools[${index}]`, tool);
    if (!isMcpTool(tool)) continue;
    const server = ownerOf(tool.name, prefixes) ?? tool.name.split('__')[1];
    if (server !== undefined && server !== '' && !servers.includes(server)) servers.push(server);
  }
  return servers;
}
