import type { CompleteUsage } from '@delegate/core';
import type { AgentTree } from '../usage/agent-tree.js';
import type { RunExitReason, RunResult } from './run-renderer.js';

/** The `subtype` of a `result` line, in the names `claude -p` uses. */
export function resultSubtype(
  reason: RunExitReason,
): 'success' | 'error_max_turns' | 'error_during_execution' {
  if (reason === 'completed') return 'success';
  if (reason === 'max_turns') return 'error_max_turns';
  return 'error_during_execution';
}

/** Usage in the API's field names (the `usage` of a result line). */
export function usageFields(usage: CompleteUsage): Record<string, unknown> {
  return {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    output_tokens: usage.output_tokens,
    cache_creation: { ...usage.cache_creation },
  };
}

/** Each agent of the tree with its usage and cost, for JSON outputs. */
export function agentSummaries(tree: AgentTree): Array<Record<string, unknown>> {
  return tree.nodes().map((node) => ({
    agent_id: node.agentId,
    parent_agent_id: node.parentAgentId ?? null,
    agent_type: node.agentType,
    description: node.description,
    mode: node.mode,
    model: node.model,
    status: node.status,
    tool_uses: node.toolUseCount,
    duration_ms: (node.endedAt ?? Date.now()) - node.startedAt,
    usage: usageFields(node.usage),
    cost_usd: node.costUsd,
    ...(node.priced ? {} : { unpriced: true }),
    ...(node.result !== undefined ? { result: node.result } : {}),
    ...(node.error !== undefined ? { error: node.error } : {}),
  }));
}

/** The fields of the final result (the `json` object and the `stream-json` result line). */
export function resultFields(result: RunResult): Record<string, unknown> {
  const totals = result.tree.totals();
  return {
    type: 'result',
    subtype: resultSubtype(result.exitReason),
    is_error: result.exitReason !== 'completed',
    result: result.text,
    session_id: result.sessionId,
    exit_reason: result.exitReason,
    ...(result.error !== undefined ? { error: result.error } : {}),
    duration_ms: result.durationMs,
    duration_api_ms: result.durationApiMs,
    num_turns: result.numTurns,
    usage: usageFields(totals.usage),
    total_cost_usd: totals.costUsd,
    ...(totals.priced ? {} : { cost_incomplete: true }),
    agents: agentSummaries(result.tree),
  };
}
