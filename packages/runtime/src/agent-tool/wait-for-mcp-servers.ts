import {
  type AgentDefinition,
  type AppState,
  type ToolUseContext,
  DelegateError,
} from '@delegate/core';
import { mcpServersWithTools, missingMcpServers } from '@delegate/tool-filter';
import type { AgentRuntime } from '../session/agent-runtime.js';
import { delay } from '../util/delay.js';

type Matcher = (name: string) => boolean;

function anyClient(state: AppState, type: 'pending' | 'failed', matches: Matcher): boolean {
  return state.mcp.clients.some((client) => client.type === type && matches(client.name));
}

/** Polls while a matching server is connecting; stops early when one fails or the caller aborts. */
async function pollWhileConnecting(options: {
  runtime: AgentRuntime;
  context: ToolUseContext;
  matches: Matcher;
}): Promise<AppState> {
  const { runtime, context, matches } = options;
  let state = context.getAppState();
  const deadline = Date.now() + runtime.options.mcpWaitMs;
  while (anyClient(state, 'pending', matches) && Date.now() < deadline) {
    try {
      await delay(runtime.options.mcpPollMs, { signal: context.abortController.signal });
    } catch {
      break;
    }
    runtime.refreshMcp?.();
    state = context.getAppState();
    if (anyClient(state, 'failed', matches)) break;
  }
  return state;
}

/**
 * Waits (up to `mcpWaitMs`) for the MCP servers an agent requires that are still
 * connecting, then fails with `MCP_SERVERS_MISSING` naming what is missing, the servers
 * that have tools, and the ones that failed, when any requirement is unmet.
 */
export async function waitForRequiredMcpServers(
  runtime: AgentRuntime,
  agent: AgentDefinition,
  context: ToolUseContext,
): Promise<void> {
  const required = agent.requiredMcpServers;
  if (!required?.length) return;
  const matches: Matcher = (name) =>
    required.some((pattern) => name.toLowerCase().includes(pattern.toLowerCase()));
  runtime.refreshMcp?.();
  const state = await pollWhileConnecting({ runtime, context, matches });
  // Under their configured names (`acme.tools`, `gh__ent`), not as tool names spell them.
  const servers = mcpServersWithTools(
    state.mcp.tools,
    state.mcp.clients.map((client) => client.name),
  );
  const missing = missingMcpServers(agent, servers);
  if (missing.length === 0) return;
  const failures = state.mcp.clients
    .filter((client) => client.type !== 'connected' && matches(client.name))
    .map((client) => `${client.name} (${client.type}${client.error ? `: ${client.error}` : ''})`);
  throw new DelegateError(
    'MCP_SERVERS_MISSING',
    `Agent "${agent.agentType}" requires MCP servers matching: ${missing.join(', ')}. MCP servers with tools: ${servers.length > 0 ? servers.join(', ') : 'none'}.` +
      (failures.length > 0 ? ` Not available: ${failures.join(', ')}.` : '') +
      ' Configure and connect the required servers, then try again.',
    { details: { missing, serversWithTools: servers } },
  );
}
