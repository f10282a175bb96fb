/** One measured result of a benchmark. */
export type BenchResult = {
  /** What was measured, such as `agent-defs: load 2000 files (cold)`. */
  name: string;
  /** Measured numbers; name each with its unit (`filesPerSecond`, `msPerTurn`, `bytesPerChild`). */
  metrics: Record<string, number>;
  /** Free-form facts about the setup (counts, sizes). */
  notes?: Record<string, string | number | boolean>;
  /** The conditions of the measurement in one sentence (sizes, latency, what is compared). */
  conditions?: string;
  /** The targets this result is checked against, each with whether the measurement met it. */
  targets?: BenchTarget[];
};

/** One target a result is checked against. */
export type BenchTarget = {
  /** The metric (a key of `metrics`). */
  metric: string;
  /** The target in words, such as `<= 1.15`. */
  target: string;
  /** The measured value. */
  value: number;
  /** True when the value meets the target. */
  met: boolean;
  /**
   * Whether the target can be met at all under these conditions, when the bench knows: false
   * when even the best possible value (`bestPossible`, such as a cache ceiling) misses it.
   */
  reachable?: boolean;
  /** The best value any way could reach under these conditions, when the bench knows it. */
  bestPossible?: number;
};

/** Checks `metrics[metric]` against a bound: `<=` or `>=` `bound`. */
export function checkTarget(
  metrics: Record<string, number>,
  metric: string,
  comparison: '<=' | '>=',
  bound: number,
): BenchTarget {
  const value = metrics[metric] ?? Number.NaN;
  const met = comparison === '<=' ? value <= bound : value >= bound;
  return { metric, target: `${comparison} ${bound}`, value, met };
}

/**
 * Marks `target` with whether it is reachable at all: `bestPossible` is the best value any way
 * could reach under the same conditions (for `<=` the lowest, for `>=` the highest).
 */
export function withReachability(target: BenchTarget, bestPossible: number): BenchTarget {
  const bound = Number(target.target.split(' ')[1]);
  const reachable = target.target.startsWith('<=') ? bestPossible <= bound : bestPossible >= bound;
  return { ...target, reachable, bestPossible };
}

/** A benchmark module's default export; `quick` asks for a tiny size (CI). */
export type Bench = (options?: { quick?: boolean }) => Promise<BenchResult[]>;

/** Runs `fn` and returns the elapsed wall time in milliseconds. */
export async function timeIt(fn: () => unknown | Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Runs `fn` `runs` times after `warmup` runs and returns the median time in milliseconds. */
export async function medianTime(
  fn: () => unknown | Promise<unknown>,
  options: { runs?: number; warmup?: number } = {},
): Promise<number> {
  const runs = options.runs ?? 5;
  for (let index = 0; index < (options.warmup ?? 1); index++) await fn();
  const times: number[] = [];
  for (let index = 0; index < runs; index++) times.push(await timeIt(fn));
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] ?? 0;
}
