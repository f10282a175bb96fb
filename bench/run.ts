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

for (const file of files) {
  const module = (await import(pathToFileURL(join(here, 'src', file)).href)) as {
    default: (options: { quick: boolean }) => ReturnType<Bench>;
  };
  process.stdout.write(`• ${file}\n`);
  const results = await module.default({ quick });
  for (const result of results) {
    process.stdout.write(`  ${result.name}: ${JSON.stringify(result.metrics)}\n`);
    report.results.push(result);
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
