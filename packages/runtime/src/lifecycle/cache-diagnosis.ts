import type Anthropic from '@anthropic-ai/sdk';
import { diagnoseCacheBreak, formatCacheBreak } from '@delegate/fork-cache';
import type { CacheDiagnosisEntry } from '../session/session-options.js';
import type { AgentRecord } from './agent-record.js';

type Request = Anthropic.MessageCreateParamsStreaming;

/**
 * Diagnoses each request of one sub-agent run against the request it should read from: the
 * first against `baseline` (a fork's parent's last request), every later one against the
 * run's previous request. A fresh agent's first request has nothing earlier to read.
 */
export class CacheDiagnoser {
  private previous: Request | undefined;

  constructor(
    private readonly record: AgentRecord,
    private readonly report: (entry: CacheDiagnosisEntry) => void,
    baseline: Request | undefined,
  ) {
    this.previous = baseline;
  }

  /** Diagnoses `request` (the run's `turn`-th) and hands the entry to the report. */
  observe(request: Request, turn: number): void {
    const earlier = this.previous;
    this.previous = request;
    const base = { agentId: this.record.agentId, agentType: this.record.agentType, turn };
    if (earlier === undefined) {
      this.report({
        ...base,
        comparedWith: 'none',
        line: 'first request of a fresh agent: nothing earlier to read (its prefix is its own)',
      });
      return;
    }
    const diagnosis = diagnoseCacheBreak(earlier as never, request as never);
    this.report({
      ...base,
      comparedWith: turn === 1 ? 'parent' : 'previous',
      diagnosis,
      line: formatCacheBreak(diagnosis),
    });
  }
}
