import type { AgentEvent } from '@delegate/core';
import type { QueryEvent } from '@delegate/runtime';
import { resultFields } from './result-fields.js';
import type { RunRenderer, RunResult } from './run-renderer.js';

/** One JSON object at the end: the answer, the session id, usage and cost per agent, how it ended. */
export class JsonRenderer implements RunRenderer {
  constructor(private readonly write: (text: string) => void) {}

  start(): void {}

  onMainEvent(_event: QueryEvent): void {}

  onAgentEvent(_event: AgentEvent): void {}

  async finish(result: RunResult): Promise<void> {
    this.write(`${JSON.stringify(resultFields(result), null, 2)}\n`);
  }
}
