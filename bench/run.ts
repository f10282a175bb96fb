import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Bench, BenchResult } from './src/harness.js';

// Runs every bench/src/*.bench.ts (or those named on the command line) and writes one
// JSON report. Numbers are wall-clock on a shared machine: compare ratios measured side
// by side in one run, not absolute values across runs. `--quick` asks every bench for a
// tiny size (a few seconds, for CI); a bench reads it from its options argument.
const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const only = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
const files = readdirSync(join(here, 'src'))
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => only.length === 0 || only.some((name) => file.includes(name)))
  .sort();

const report: {
  startedAt: string;
  node: string;
  platform: string;
  quick: boolean;
  results: BenchResult[];
} = {
  startedAt: new Date().toISOString(),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  quick,
  results: [],
};

// A bench that throws is recorded as a failed result and the others still run; the run
// then exits with 1 after writing the report. A figure that misses its target never fails.
const failed: string[] = [];
for (const file of files) {
  process.stdout.write(`• ${file}\n`);
  const started = performance.now();
  try {
    const module = (await import(pathToFileURL(join(here, 'src', file)).href)) as {
      default: Bench;
    };
    const results = await module.default({ quick });
    for (const result of results) {
      const missed = (result.targets ?? []).filter((target) => !target.met);
      const verdict =
        result.targets && result.targets.length > 0
          ? ` [targets: ${result.targets.length - missed.length}/${result.targets.length} met${missed.length > 0 ? `; missed ${missed.map((target) => `${target.metric} ${target.value} (${target.target}${target.reachable === false ? `; unreachable here, best possible ${target.bestPossible}` : ''})`).join(', ')}` : ''}]`
          : '';
      process.stdout.write(`  ${result.name}: ${JSON.stringify(result.metrics)}${verdict}\n`);
      report.results.push(result);
    }
    process.stdout.write(`  (${file}: ${Math.round(performance.now() - started)} ms)\n`);
  } catch (error) {
    failed.push(file);
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stdout.write(`  FAILED: ${message}\n`);
    report.results.push({
      name: `${file.replace(/\.bench\.ts$/, '')}: the bench failed to run`,
      metrics: {},
      notes: { error: message.slice(0, 2000) },
    });
  }
}

const outDir = join(here, 'results');
mkdirSync(outDir, { recursive: true });
const outFile = join(outDir, `report-${report.startedAt.replace(/[:.]/g, '-')}.json`);
writeFileSync(outFile, JSON.stringify(report, null, 2));
// latest.json is the committed record of a full run; a quick or partial run must not
// replace it.
const latestName = quick
  ? 'latest-quick.json'
  : only.length > 0
    ? 'latest-partial.json'
    : 'latest.json';
writeFileSync(join(outDir, latestName), JSON.stringify(report, null, 2));
process.stdout.write(`report: ${outFile}\n`);
if (failed.length > 0) {
  process.stdout.write(`benches that failed to run: ${failed.join(', ')}\n`);
  process.exitCode = 1;
}
