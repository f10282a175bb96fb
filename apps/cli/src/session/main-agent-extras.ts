import type { AgentDefinition, Tool } from '@delegate/core';
import { UsageError } from '../exit-codes.js';
import { type StdioServer, readStdioServer } from './load-mcp-config.js';

/** How messages name the definition `--agent` chose: the flag, the agent and its file. */
export function describeMainAgent(agent: AgentDefinition): string {
  return `--agent ${agent.agentType} (${agent.filePath ?? agent.source})`;
}

/** The MCP servers of an `--agent` definition: the ones it defines, and the names it refers to. */
export type MainAgentMcp = {
  /** Servers defined in the file (`mcpServers: [{ name: { command, args } }]`), to start. */
  inline: Record<string, StdioServer>;
  /** Names of servers it expects the session to have (`mcpServers: [name]`). */
  named: string[];
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the `mcpServers` of the definition the main thread runs as. A server the file defines
 * is a stdio server (`command`, `args`, `env`, `cwd`; a relative `cwd` is taken from `cwd`,
 * the main agent's working directory); one that is not, or a name defined twice, is a
 * `UsageError` naming the flag, the file and the entry. An untrusted project's file has lost
 * its own servers before this point.
 */
export function readMainAgentMcp(agent: AgentDefinition, cwd: string): MainAgentMcp {
  const inline: Record<string, StdioServer> = {};
  const named: string[] = [];
  const where = describeMainAgent(agent);
  (agent.mcpServers ?? []).forEach((entry, index) => {
    if (typeof entry === 'string') {
      if (!named.includes(entry)) named.push(entry);
      return;
    }
    for (const [name, config] of Object.entries(entry)) {
      const at = `${where}: mcpServers[${index}].${name}`;
      if (name in inline)
        throw new UsageError(`${at}: a second server named "${name}"; give each its own name.`);
      if (!isRecord(config))
        throw new UsageError(
          `${at}: expected a server configuration ({ command, args }), found ${Array.isArray(config) ? 'a list' : typeof config}.`,
        );
      inline[name] = readStdioServer(config, { where: at, baseDir: cwd });
    }
  });
  return { inline, named };
}

/**
 * Checks, once the MCP servers have settled, what the `--agent` definition expects of them: a
 * `requiredMcpServers` pattern no connected server with tools matches is a `UsageError` (the
 * agent was written to need it, as a sub-agent of that type is refused); a server it names that
 * the session does not have is returned as a warning.
 */
export async function checkMainAgentMcp(options: {
  agent: AgentDefinition;
  named: readonly string[];
  configured: readonly string[];
  tools: readonly Tool[];
}): Promise<string[]> {
  const { agent } = options;
  // Loaded when --agent is given, as the CLI loads the rest of tool-filter.
  const { missingMcpServers, mcpServersWithTools } = await import('@delegate/tool-filter');
  const where = describeMainAgent(agent);
  // Under their configured names (`acme.tools`), not as tool names spell them (`acme_tools`).
  const withTools = mcpServersWithTools(options.tools, options.configured);
  const missing = missingMcpServers(agent, withTools);
  if (missing.length > 0) {
    throw new UsageError(
      `${where}: requires MCP servers matching ${missing.join(', ')}; MCP servers with tools: ${withTools.length > 0 ? withTools.join(', ') : 'none'}. Start them with --mcp-config, or define them in the agent file's mcpServers.`,
    );
  }
  const warnings: string[] = [];
  const unknown = options.named.filter((name) => !options.configured.includes(name));
  if (unknown.length > 0)
    warnings.push(
      `${where}: mcpServers names ${unknown.map((name) => `"${name}"`).join(', ')}, which this run does not start; the main agent runs without their tools. Configure them with --mcp-config.`,
    );
  return warnings;
}

/**
 * The hooks of the `--agent` definition the session runs (PreToolUse and PostToolUse, as
 * `mainAgentHooks`), and a warning for each part of the file that does not run: its other
 * hook events, and its skills (Delegate loads none).
 */
export async function mainAgentToolHooks(agent: AgentDefinition): Promise<{
  hooks?: Record<string, unknown>;
  warnings: string[];
}> {
  const { splitToolHooks } = await import('@delegate/runtime');
  const { toolHooks, otherEvents } = splitToolHooks(agent.hooks);
  const where = describeMainAgent(agent);
  const warnings: string[] = [];
  if (otherEvents.length > 0)
    warnings.push(
      `${where}: has hooks for ${otherEvents.join(', ')}; Delegate runs only PreToolUse and PostToolUse hooks, so those do not run.`,
    );
  if (agent.skills?.length)
    warnings.push(
      `${where}: preloads skills (${agent.skills.join(', ')}); Delegate does not load skills, so the main agent runs without them.`,
    );
  return { ...(toolHooks ? { hooks: toolHooks } : {}), warnings };
}
