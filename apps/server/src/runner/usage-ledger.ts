import { type CompleteUsage, type Usage, addUsage, costOfUsage, emptyUsage } from '@delegate/core';

/**
 * One agent's usage: what earlier workers recorded for it (`initial`, from the store) plus
 * what this worker's session used. The runtime reports an agent's session total in every
 * `agent.cost` event (each kept response once); until the first one arrives, the figure is
 * what its finished runs used (`settled`) plus what its current run has used so far (`live`).
 */
export class UsageLedger {
  private readonly initial: CompleteUsage;
  private settled: CompleteUsage;
  private live: CompleteUsage = emptyUsage();
  private runtimeTotal: CompleteUsage | undefined;

  constructor(initial: CompleteUsage = emptyUsage()) {
    this.initial = addUsage(initial, undefined);
    this.settled = addUsage(initial, undefined);
  }

  /** Takes the runtime's total for the agent in this session (from `agent.cost`); it wins from now on. */
  setRuntimeTotal(usage: Usage | null | undefined): void {
    this.runtimeTotal = addUsage(usage, undefined);
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
    if (this.runtimeTotal) return addUsage(this.initial, this.runtimeTotal);
    return addUsage(this.settled, this.live);
  }

  /** Cost of `total` on `model` in US dollars, and whether the model has a price. */
  cost(model: string): { costUsd: number; priced: boolean } {
    return costOfUsage(this.total, model);
  }
}
