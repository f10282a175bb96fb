import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult } from './harness.js';

// The CLI as a user runs it: the built bundle in a child process. Each figure is compared,
// in the same run, with a baseline measured the same way (`node -e 0`, or the same work in
// another output format), so the machine's load cancels out of the ratios.
const CLI = fileURLToPath(new URL('../../apps/cli/dist/bin.js', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./__fixtures__/report-usage.cjs', import.meta.url));
const MANY_EVENTS = fileURLToPath(new URL('./__fixtures__/many-events.mjs', import.meta.url));
const quick = process.argv.includes('--quick');

type Measured = { wallMs: number; maxRssKb: number; cpuMs: number; stdout: string };

// Peak RSS as the kernel reports it when the process ends (wait4, through GNU time), which
// also counts what happens after the last JavaScript runs; the preload's figure is the fallback.
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

async function measure(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<Measured> {
  const stamp = process.hrtime.bigint();
  const usageFile = join(options.cwd, `usage-${stamp}.json`);
  const rssFile = join(options.cwd, `rss-${stamp}.txt`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    HOME: options.cwd,
    NO_COLOR: '1',
    NODE_OPTIONS: `--require ${PRELOAD}`,
    DELEGATE_BENCH_USAGE_FILE: usageFile,
  };
  delete env['ANTHROPIC_API_KEY'];
  const start = process.hrtime.bigint();
  const stdout = await new Promise<string>((resolve, reject) => {
    const [program, programArgs] = GNU_TIME
      ? [GNU_TIME, ['-f', '%M', '-o', rssFile, command, ...args]]
      : [command, args];
    const child = spawn(program, programArgs, {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)),
    );
  });
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  const usage = JSON.parse(await readFile(usageFile, 'utf8')) as {
    maxRssKb: number;
    cpuMs: number;
  };
  const kernelRssKb = GNU_TIME
    ? Number((await readFile(rssFile, 'utf8')).trim().split('\n').at(-1))
    : Number.NaN;
  // Every run sees the same folder: the live-view run Globs it.
  await Promise.all([rm(usageFile, { force: true }), rm(rssFile, { force: true })]);
  return {
    wallMs,
    ...usage,
    ...(Number.isFinite(kernelRssKb) ? { maxRssKb: kernelRssKb } : {}),
    stdout,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function startup(cwd: string): Promise<BenchResult> {
  const runs = quick ? 2 : 15;
  const node: Measured[] = [];
  const cli: Measured[] = [];
  // Alternate the two, so both see the same machine.
  for (let index = 0; index < runs + 1; index++) {
    const baseline = await measure(process.execPath, ['-e', '0'], { cwd });
    const run = await measure(
      process.execPath,
      [CLI, 'run', '--sim', 'hi', '--output-format', 'json'],
      { cwd },
    );
    if (index === 0) continue; // warm-up: the file cache
    node.push(baseline);
    cli.push(run);
  }
  const nodeMs = median(node.map((entry) => entry.wallMs));
  const cliMs = median(cli.map((entry) => entry.wallMs));
  const targetMs = 2 * nodeMs + 150;
  return {
    name: 'cli: `delegate run --sim "hi" --output-format json`, process start to exit',
    metrics: {
      cliMsMedian: cliMs,
      nodeMsMedian: nodeMs,
      targetMs,
      cliOverTarget: cliMs / targetMs,
      cliOverNode: cliMs / nodeMs,
      peakRssMbMedian: median(cli.map((entry) => entry.maxRssKb)) / 1024,
      peakRssMbMax: Math.max(...cli.map((entry) => entry.maxRssKb)) / 1024,
      nodePeakRssMb: median(node.map((entry) => entry.maxRssKb)) / 1024,
    },
    notes: {
      runs,
      target: 'at most 2 × `node -e 0` + 150 ms, peak RSS under 100 MB',
      rss: GNU_TIME
        ? 'peak RSS from the kernel when the process ended (GNU time %M, wait4)'
        : 'process.resourceUsage().maxRSS at exit (preloaded with --require)',
      reference:
        'Claude Code 2.1.328: about 0.75 s and 210 MB for the same one turn (from the issue)',
    },
  };
}

async function liveViewCpu(cwd: string): Promise<BenchResult> {
  if (!existsSync('/usr/bin/script')) {
    return {
      name: 'cli: live view CPU over a ~1,000-event run',
      metrics: {},
      notes: { skipped: 'util-linux `script` (a pseudo-terminal) is not installed' },
    };
  }
  const env = {
    DELEGATE_BENCH_AGENTS: quick ? '3' : '40',
    DELEGATE_BENCH_STEPS: quick ? '2' : '11',
    TERM: 'xterm-256color',
  };
  const args = (format: string) => [
    CLI,
    'run',
    '--sim',
    MANY_EVENTS,
    '--permission-mode',
    'bypassPermissions',
    '--output-format',
    format,
    'go',
  ];
  const counted = await measure(process.execPath, args('stream-json'), { cwd, env });
  const events = counted.stdout
    .split('\n')
    .filter((line) => line.includes('"type":"delegate_event"')).length;
  // The live view draws only on a terminal: `script` gives the CLI a pseudo-terminal of a set size.
  const inTerminal = (format: string) =>
    measure(
      '/usr/bin/script',
      [
        '-qec',
        `stty cols 140 rows 50; exec ${[process.execPath, ...args(format)].map((part) => `'${part}'`).join(' ')}`,
        '/dev/null',
      ],
      { cwd, env },
    );
  const runs = quick ? 1 : 5;
  const json: number[] = [];
  const live: number[] = [];
  for (let index = 0; index < runs; index++) {
    json.push((await inTerminal('json')).cpuMs);
    live.push((await inTerminal('text')).cpuMs);
  }
  const jsonCpu = median(json);
  const liveCpu = median(live);
  return {
    name: 'cli: live view CPU over a ~1,000-event run (text in a terminal vs json)',
    metrics: {
      events,
      cpuMsJson: jsonCpu,
      cpuMsLiveView: liveCpu,
      liveViewCpuOverheadPercent: ((liveCpu - jsonCpu) / jsonCpu) * 100,
    },
    notes: {
      runs,
      agents: Number(env.DELEGATE_BENCH_AGENTS),
      toolCallsPerAgent: Number(env.DELEGATE_BENCH_STEPS),
      terminal: '140×50 pseudo-terminal (util-linux script)',
      target: 'under 2% more CPU than the same run with --output-format json',
      cpu: 'user + system CPU of the CLI process, from process.resourceUsage() at exit',
    },
  };
}

/** The CLI's start-up cost and memory, and what the live view costs. */
export default async function cliBench(): Promise<BenchResult[]> {
  const cwd = await mkdtemp(join(tmpdir(), 'delegate-cli-bench-'));
  try {
    return [await startup(cwd), await liveViewCpu(cwd)];
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}
