import type { AgentEvent } from '@delegate/core';
import { clockTime, formatDuration, formatTokens, oneLine, printable } from '../terminal/format.js';

/** A line for an agent's cost only when a budget limits it (every response has a progress line already). */
function costLine(
  head: string,
  event: Extract<AgentEvent, { type: 'agent.cost' }>,
): string | undefined {
  const { tokens, costUsd } = event.remaining;
  if (tokens === undefined && costUsd === undefined) return undefined;
  const left = [
    ...(tokens !== undefined ? [`${formatTokens(tokens)} tokens`] : []),
    ...(costUsd !== undefined ? [`$${costUsd.toFixed(4)}`] : []),
  ].join(', ');
  return `${head} has spent $${event.costUsd.toFixed(4)}; budget left ${left}`;
}

/**
 * One plain line (no escape codes) for a lifecycle event, or undefined for events that are
 * not lifecycle steps (`agent.message` carries whole messages and is left to other outputs).
 * What it quotes (a model name from a settings file, a tool name a model wrote) shows its
 * control characters as `?`.
 */
export function formatPlainEventLine(event: AgentEvent): string | undefined {
  const line = eventLine(event);
  return line === undefined ? undefined : printable(line);
}

function eventLine(event: AgentEvent): string | undefined {
  const head = `${clockTime(event.timestamp)} ${event.agentId}`;
  switch (event.type) {
    case 'agent.started':
      return `${head} started ${event.agentType} "${oneLine(event.description, 60)}" (${event.mode}, ${event.model}${event.parentAgentId ? `, under ${event.parentAgentId}` : ''})`;
    case 'agent.tool_use':
      return `${head} tool ${event.toolName}`;
    case 'agent.progress':
      return `${head} progress ${event.messageCount} messages, ${event.toolUseCount} tool calls, ${formatTokens(event.tokens)} tokens`;
    case 'agent.background_hint':
      return `${head} has run ${formatDuration(event.elapsedMs)} and can be moved to the background`;
    case 'agent.backgrounded':
      return `${head} moved to the background (task ${event.taskId})`;
    case 'agent.completed':
      return `${head} completed in ${formatDuration(event.durationMs)} with ${event.toolUseCount} tool calls: ${oneLine(event.result, 80)}`;
    case 'agent.failed':
      return `${head} ${event.code === 'ABORTED' ? 'stopped' : 'failed'}: ${oneLine(event.error, 120)}`;
    case 'agent.notification':
      return `${head} notification queued for its parent (task ${event.taskId}, ${event.status})`;
    case 'agent.warning':
      return `${head} warning ${event.code}: ${oneLine(event.message, 200)}`;
    case 'agent.cache_evictable':
      return `${head} ended; its prompt cache (last request ${event.lastRequestId}) will not be read again`;
    case 'agent.cost':
      return costLine(head, event);
    case 'agent.message':
      return undefined;
  }
}
