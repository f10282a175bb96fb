import { type CompleteUsage, type Usage, addUsage, costOfUsage, emptyUsage } from '@delegate/core';

/**
 * One agent's usage: what its finished runs used (`settled`) plus what its current run
 * has used so far (`live`). Sub-agents settle from `agent.completed` (or their task's last
 * figure when they fail); the main agent settles every kept response. When the runtime
 * reports per-agent usage itself (issue 14), this is the one place to switch.
 */
export class UsageLedger {
  private settled: CompleteUsage;
  private live: CompleteUsage = emptyUsage();

  constructor(initial: CompleteUsage = emptyUsage()) {
    this.settled = addUsage(initial, undefined);
  }

  /** Adds a finished response or run. */
  settle(usage: Usage | null | undefined): void {
    this.settled = addUsage(this.settled, usage);
    this.live = emptyUsage();
  }

  /** Replaces the current run's running total. */
  setLive(usage: Usage | null | undefined): void {
    this.live = addUsage(usage, undefined);
  }

  /** Settles the current run's running total (a run that failed or was stopped). */
  settleLive(): void {
    this.settle(this.live);
  }

  /** Everything used so far. */
  get total(): CompleteUsage {
    return addUsage(this.settled, this.live);
  }

  /** Cost of `total` on `model` in US dollars, and whether the model has a price. */
  cost(model: string): { costUsd: number; priced: boolean } {
    return costOfUsage(this.total, model);
  }
}
