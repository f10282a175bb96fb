/** One measured result of a benchmark. */
export type BenchResult = {
  /** What was measured, such as `agent-defs: load 2000 files (cold)`. */
  name: string;
  /** Measured numbers; name each with its unit (`filesPerSecond`, `msPerTurn`, `bytesPerChild`). */
  metrics: Record<string, number>;
  /** Free-form facts about the setup (counts, sizes). */
  notes?: Record<string, string | number | boolean>;
};

/** A benchmark module's default export. */
export type Bench = () => Promise<BenchResult[]>;

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
