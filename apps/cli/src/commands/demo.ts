import { rmSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliIo } from '../cli-io.js';
import { DEMO_PROMPT, type DemoVariant, createDemoPolicy } from '../demo/demo-policy.js';
import { type DemoRunSummary, type UsageTotal, summarizeDemoRun } from '../demo/demo-report.js';
import { EXIT_CODES, type ExitCode } from '../exit-codes.js';
import { renderTree } from '../live/render-tree.js';
import { type RunResult, SILENT_RENDERER } from '../output/run-renderer.js';
import { formatCacheTable } from '../output/run-summary.js';
import { createCliSession } from '../session/create-cli-session.js';
import { resolveConfig } from '../settings/resolve-config.js';
import { type Colors, colorsFor } from '../terminal/colors.js';
import {
  formatDuration,
  formatTable,
  formatTokens,
  formatUsd,
  printableLines,
} from '../terminal/format.js';
import { AgentTree } from '../usage/agent-tree.js';
import { executeRun, exitCodeFor } from './execute-run.js';
import { createRenderer, describeSession, drawsLiveTree } from './run.js';

/** Simulated model latency of the demo, so the live tree has something to show. */
const DEMO_PACING = { timeToFirstTokenMs: 150, msPerToken: 2 };

/** The sample project shipped with the CLI (next to `dist/`). */
function sampleProjectDir(): string {
  return fileURLToPath(new URL('../demo-project/', import.meta.url));
}

async function runVariant(options: {
  variant: DemoVariant;
  root: string;
  io: CliIo;
  fast: boolean;
  visible: boolean;
}): Promise<RunResult> {
  // A second Ctrl-C quits at once; the copy of the sample project goes with it.
  const forceExit = (): never => {
    rmSync(root, { recursive: true, force: true });
    process.exit(EXIT_CODES.interrupted);
  };
  const { variant, root, io } = options;
  const project = join(root, variant, 'tiny-shop');
  const home = join(root, variant, 'home');
  await mkdir(home, { recursive: true });
  await cp(sampleProjectDir(), project, { recursive: true });
  // The demo reads no settings, agents or memory of the person running it.
  const env: NodeJS.ProcessEnv = { ...io.env, HOME: home };
  delete env['ANTHROPIC_API_KEY'];
  const config = resolveConfig({
    flags: { cwd: project, permissionMode: 'default' },
    env,
    processCwd: project,
  });
  const cli = await createCliSession({
    config,
    processCwd: project,
    simPolicy: createDemoPolicy(variant),
    ...(options.fast ? {} : { simPacing: DEMO_PACING }),
    session: { forkEnabled: variant === 'fork' },
  });
  const tree = new AgentTree({
    mainModel: cli.session.context.options.model,
    prices: config.prices.value,
  });
  const renderer = options.visible ? await createRenderer({ format: 'text', io, tree }) : undefined;
  (renderer ?? SILENT_RENDERER).start(describeSession(cli));
  const result = await executeRun({
    cli,
    prompt: DEMO_PROMPT,
    renderer: renderer ?? SILENT_RENDERER,
    tree,
    io,
    liveView: renderer?.liveView,
    forceExit,
  });
  renderer?.liveView?.stop();
  return result;
}

function usageRow(label: string, total: UsageTotal): string[] {
  return [
    label,
    formatTokens(total.usage.cache_read_input_tokens),
    formatTokens(total.usage.cache_creation_input_tokens),
    formatTokens(total.usage.input_tokens),
    formatTokens(total.usage.output_tokens),
    formatUsd(total.costUsd),
  ];
}

function ratio(part: number, whole: number): string {
  return whole > 0 ? `${(part / whole).toFixed(2)}×` : 'n/a';
}

function printDemo(options: {
  io: CliIo;
  colors: Colors;
  fork: RunResult;
  forkSummary: DemoRunSummary;
  fresh?: DemoRunSummary;
}): void {
  const { io, colors, fork, forkSummary, fresh } = options;
  const out: string[] = [];
  // On a terminal the live view's last frame, just above, is the finished tree already.
  if (!(drawsLiveTree(io) && io.stdout.isTTY === true)) {
    out.push(
      '',
      colors.bold('Agent tree'),
      ...renderTree(fork.tree, {
        colors,
        width: io.stdout.columns || 160,
        now: Date.now(),
        frame: 0,
        final: true,
      }),
    );
  }
  out.push('', colors.bold('Reports'));
  for (const agent of forkSummary.agents) {
    if (agent.agentId === 'main') continue;
    out.push(
      colors.bold(`${agent.agentType} "${agent.description}" [${agent.mode}, ${agent.status}]`),
    );
    out.push(
      ...(agent.report ?? agent.error ?? '(no report)').split('\n').map((line) => `  ${line}`),
    );
  }
  out.push(
    colors.bold('main agent (final answer)'),
    ...forkSummary.answer.split('\n').map((line) => `  ${line}`),
  );
  out.push(
    '',
    colors.bold('Cache per agent (tokens; cost from the price table)'),
    ...formatCacheTable(fork.tree),
  );
  if (fresh) {
    out.push(
      '',
      colors.bold('The same work two ways, in this run (each on a fresh simulator cache)'),
    );
    out.push(
      ...formatTable(
        [
          ['', 'cache read', 'cache write', 'uncached', 'output', 'cost'],
          usageRow('3 workers as forks', forkSummary.workers),
          usageRow('3 fresh agents + context as text', fresh.workers),
          usageRow('whole run with forks', forkSummary.total),
          usageRow('whole run with fresh agents', fresh.total),
        ],
        { rightAlign: [1, 2, 3, 4, 5] },
      ),
    );
    out.push(
      `Forked workers cost ${ratio(forkSummary.workers.costUsd, fresh.workers.costUsd)} of fresh ones (whole run: ${ratio(forkSummary.total.costUsd, fresh.total.costUsd)}): a fork's request repeats the parent's prefix byte for byte, so it reads it from the cache instead of writing it again.`,
      `With fresh workers the main agent also writes the context into their prompts: ${formatTokens(fresh.agents.find((agent) => agent.agentId === 'main')?.usage.output_tokens ?? 0)} output tokens against ${formatTokens(forkSummary.agents.find((agent) => agent.agentId === 'main')?.usage.output_tokens ?? 0)}.`,
    );
  }
  out.push(
    colors.dim(
      `Token counts and cache hits come from api-sim's model of the prompt cache (an estimate of the real API). Finished in ${formatDuration(forkSummary.durationMs + (fresh?.durationMs ?? 0))}.`,
    ),
  );
  io.stdout.write(`${out.join('\n')}\n`);
}

/**
 * `delegate demo`: on a copy of the bundled sample project and an in-process simulator
 * whose script stands in for the model, a main agent forks three workers in one message
 * (real Glob, Grep and Read), starts a background agent whose notification arrives while
 * it works on, and asks Plan for a plan; then the same work with fresh sub-agents given
 * the context as text, for the cache comparison. Nothing is left behind.
 */
export async function demoCommand(options: {
  io: CliIo;
  json: boolean;
  keep: boolean;
  compare: boolean;
  fast: boolean;
}): Promise<ExitCode> {
  const { io } = options;
  const colors = colorsFor(io.stdout, io.env);
  const root = await mkdtemp(join(tmpdir(), 'delegate-demo-'));
  try {
    if (!options.json) {
      io.stdout.write(
        `${colors.bold('delegate demo')}: a scripted policy stands in for the model (the bundled api-sim simulator, in this process, offline); the tools, files and agents are real.\nSample project copied to ${join(root, 'fork', 'tiny-shop')}\n\n`,
      );
    }
    const fork = await runVariant({
      variant: 'fork',
      root,
      io,
      fast: options.fast,
      visible: !options.json,
    });
    const forkSummary = summarizeDemoRun('fork', fork);
    let fresh: DemoRunSummary | undefined;
    if (options.compare && fork.exitReason === 'completed') {
      if (!options.json)
        io.stderr.write(
          colors.dim('\nRunning the same work with fresh sub-agents for comparison…\n'),
        );
      // Nobody watches the comparison run, so it runs without simulated latency: its figures
      // are token counts, which latency does not change.
      fresh = summarizeDemoRun(
        'fresh',
        await runVariant({ variant: 'fresh', root, io, fast: true, visible: false }),
      );
    }
    if (options.json) {
      io.stdout.write(
        `${JSON.stringify(
          {
            simulated: true,
            note: 'A scripted policy on the bundled api-sim simulator stands in for the model; the tools, files and agents are real, and token counts come from its model of the prompt cache.',
            fork: forkSummary,
            ...(fresh
              ? {
                  fresh,
                  workerCostRatio:
                    fresh.workers.costUsd > 0
                      ? forkSummary.workers.costUsd / fresh.workers.costUsd
                      : null,
                }
              : {}),
            ...(options.keep ? { kept: root } : {}),
          },
          null,
          2,
        )}\n`,
      );
    } else {
      printDemo({ io, colors, fork, forkSummary, ...(fresh ? { fresh } : {}) });
    }
    if (fork.exitReason !== 'completed') {
      io.stderr.write(
        `delegate demo: the run ended with ${fork.exitReason}${fork.error ? `: ${printableLines(fork.error)}` : ''}\n`,
      );
      return exitCodeFor(fork.exitReason);
    }
    return EXIT_CODES.success;
  } finally {
    if (options.keep) io.stderr.write(`Kept ${root}\n`);
    else await rm(root, { recursive: true, force: true });
  }
}
