import {
  type AgentDefinition,
  type AgentDefinitionsResult,
  type ToolUseContext,
  DelegateError,
  TOOL_NAMES,
} from '@delegate/core';
import { isInForkChild } from '@delegate/fork-cache';
import {
  createAgentDeniedError,
  filterAgentsByMcpRequirements,
  filterDeniedAgents,
  getDenyRuleForAgent,
  mcpServersWithTools,
} from '@delegate/tool-filter';
import type { AgentRuntime } from '../session/agent-runtime.js';
import type { AgentToolInput } from './agent-tool-input.js';

/** The query source of fork children; a fork seeing it refuses to fork again. */
export const FORK_QUERY_SOURCE = 'agent:builtin:fork';

/** The agent a call starts. */
export type SpawnTarget = {
  /** Its definition (the synthetic fork definition for forks). */
  agent: AgentDefinition;
  /** True for a fork of the caller. */
  isFork: boolean;
  /** The definitions the caller sees. */
  definitions: AgentDefinitionsResult;
};

function allowedCandidates(definitions: AgentDefinitionsResult): AgentDefinition[] {
  const allowed = definitions.allowedAgentTypes;
  return allowed
    ? definitions.activeAgents.filter((agent) => allowed.includes(agent.agentType))
    : definitions.activeAgents;
}

/** The agents the caller may pick: allowed types, deny rules, and MCP requirements applied. */
export function visibleAgents(
  context: ToolUseContext,
  definitions: AgentDefinitionsResult,
): AgentDefinition[] {
  const state = context.getAppState();
  const withMcp = filterAgentsByMcpRequirements(
    allowedCandidates(definitions),
    mcpServersWithTools(
      state.mcp.tools,
      state.mcp.clients.map((client) => client.name),
    ),
  );
  return filterDeniedAgents(withMcp, state.toolPermissionContext, TOOL_NAMES.agent);
}

/**
 * The named definition the caller may start: refused when outside the caller's
 * `Agent(a, b)` list, when a deny rule names it (the error names the rule), and when no such
 * type exists (the error lists the available ones).
 */
export function selectAgent(
  context: ToolUseContext,
  definitions: AgentDefinitionsResult,
  agentType: string,
): AgentDefinition {
  const state = context.getAppState();
  const allowed = definitions.allowedAgentTypes;
  if (allowed && !allowed.includes(agentType)) {
    throw new DelegateError(
      'AGENT_NOT_ALLOWED',
      `This agent may only start these agent types: ${allowed.join(', ')}. "${agentType}" is not one of them.`,
      { details: { agentType, allowedAgentTypes: allowed } },
    );
  }
  const candidates = allowedCandidates(definitions);
  const permitted = filterDeniedAgents(candidates, state.toolPermissionContext, TOOL_NAMES.agent);
  const found = permitted.find((agent) => agent.agentType === agentType);
  if (found) return found;
  if (candidates.some((agent) => agent.agentType === agentType)) {
    throw createAgentDeniedError(
      agentType,
      getDenyRuleForAgent(state.toolPermissionContext, TOOL_NAMES.agent, agentType),
    );
  }
  const names = permitted.map((agent) => agent.agentType);
  throw new DelegateError(
    'AGENT_NOT_FOUND',
    `Agent type "${agentType}" not found. Available agents: ${names.length > 0 ? names.join(', ') : 'none'}.`,
    { details: { agentType, available: names } },
  );
}

function checkDepth(runtime: AgentRuntime, context: ToolUseContext): void {
  const depth = (context.queryTracking?.depth ?? -1) + 1;
  if (depth < runtime.options.maxDepth) return;
  throw new DelegateError(
    'LIMIT_EXCEEDED',
    `Sub-agents may nest ${runtime.options.maxDepth} levels deep; this one would be level ${depth + 1}. Do the work directly.`,
  );
}

/**
 * A not-found error for a type whose definition file failed to load says which file and why;
 * one for `fork` while forking is off says so.
 */
function explainNotFound(runtime: AgentRuntime, agentType: string, error: unknown): unknown {
  if (!DelegateError.isInstance(error) || error.code !== 'AGENT_NOT_FOUND') return error;
  const explained =
    agentType === runtime.forkAgent.agentType && !runtime.options.forkEnabled
      ? `Forking is off in this session (the session option forkEnabled), so "${agentType}" starts nothing. Name an agent type, or leave subagent_type out for the default one.`
      : runtime.explainUnknownAgentType?.(agentType);
  if (!explained) return error;
  const available = (error.details?.['available'] as string[] | undefined) ?? [];
  return new DelegateError(
    'AGENT_NOT_FOUND',
    `${explained} Available agents: ${available.length > 0 ? available.join(', ') : 'none'}.`,
    { details: { ...error.details, failedToLoad: true } },
  );
}

/**
 * Decides what a call starts: a fork when forking is on and no type (or `fork`) is named,
 * else the named type (default `general-purpose`). Refuses a spawn past `maxDepth` and a
 * fork inside a fork (a fork keeps the Agent tool, since its tool list must match the
 * parent's for the cache: recursion is refused by query source first, by scanning the
 * messages as a fallback).
 */
export function resolveSpawnTarget(
  runtime: AgentRuntime,
  input: AgentToolInput,
  context: ToolUseContext,
): SpawnTarget {
  const definitions = context.options.agentDefinitions ?? runtime.getAgentDefinitions();
  const isFork =
    runtime.options.forkEnabled &&
    (input.subagent_type === undefined || input.subagent_type === 'fork');
  checkDepth(runtime, context);
  if (!isFork) {
    const agentType = input.subagent_type ?? runtime.defaultAgentType;
    try {
      return { agent: selectAgent(context, definitions, agentType), isFork, definitions };
    } catch (error) {
      throw explainNotFound(runtime, agentType, error);
    }
  }
  if (context.options.querySource === FORK_QUERY_SOURCE || isInForkChild(context.messages)) {
    throw new DelegateError(
      'FORK_IN_FORK',
      'A forked worker cannot fork again. Complete your task directly with your tools.',
    );
  }
  return { agent: runtime.forkAgent, isFork, definitions };
}
