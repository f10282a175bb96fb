import type { AgentEvent } from '@delegate/core';
import type { QueryEvent } from '@delegate/runtime';
import { agentSummaries, resultSubtype, usageFields } from './result-fields.js';
import type { RunRenderer, RunResult } from './run-renderer.js';

/** One JSON object at the end: the answer, the session id, usage and cost per agent, how it ended. */
export class JsonRenderer implements RunRenderer {
  constructor(private readonly write: (text: string) => void) {}

  start(): void {}

  onMainEvent(_event: QueryEvent): void {}

  onAgentEvent(_event: AgentEvent): void {}

  async finish(result: RunResult): Promise<void> {
    const totals = result.tree.totals();
    const value = {
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
    this.write(`${JSON.stringify(value, null, 2)}\n`);
  }
}
