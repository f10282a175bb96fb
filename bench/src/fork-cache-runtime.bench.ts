import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type JournalEntry,
  type Policy,
  type Sim,
  TOKEN_OVERHEAD,
  estimateTextTokens,
  startSim,
} from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { type AgentEvent } from '@delegate/core';
import { type ForkLayout, FORK_LAYOUTS, buildForkDirectiveLine } from '@delegate/fork-cache';
import { DelegateSession, createApiClient } from '@delegate/runtime';
import {
  type Wire,
  buildHistory,
  createReader,
  historyAsText,
  messageTokens,
  smallFiles,
} from './fork-cache.bench.js';
import { type BenchResult, type BenchTarget, checkTarget, withReachability } from './harness.js';

// The "Fork cache" scenario of issue 17 measured through the runtime, as a user gets it: a
// DelegateSession on api-sim (real SDK, loopback) whose main agent reads real files of this
// repository with the real Read tool until its history holds about 2k, 20k, 41.7k or 100k
// tokens, then starts 1, 4, 16 or 32 children in one assistant message. Each child makes 2
// requests: it reads a package.json, then reports. The ways: Delegate forks in each
// forkLayout, fresh general-purpose agents given the parent's context as text in their
// prompt (the same work), and fresh general-purpose agents given only the prompt (less
// context: not the same work). Token figures are api-sim's cache model and estimator.

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WRITE = 1.25;
const READ = 0.1;
/** Reads the parent makes per turn while it builds its history. */
const READS_PER_TURN = 8;

type WayKey = ForkLayout | 'fresh-context' | 'fresh-prompt';
type Way = { key: WayKey; label: string; layout?: ForkLayout; context?: 'text' | 'none' };

const WAYS: Way[] = [
  ...FORK_LAYOUTS.map((layout) => ({
    key: layout,
    label: `Delegate fork, forkLayout '${layout}'`,
    layout,
  })),
  {
    key: 'fresh-context',
    label: 'fresh general-purpose agent, the parent context as text opening its prompt (same work)',
    context: 'text',
  },
  {
    key: 'fresh-prompt',
    label: 'fresh general-purpose agent, the prompt only (less context: not the same work)',
    context: 'none',
  },
];

type Grid = {
  sizes: number[];
  children: number[];
  ttfts: number[];
  wallTtft: number;
  rounds: number;
};
const FULL: Grid = {
  sizes: [2_000, 20_000, 41_700, 100_000],
  children: [1, 4, 16, 32],
  ttfts: [0, 300],
  wallTtft: 500,
  rounds: 3,
};
const QUICK: Grid = { sizes: [2_000], children: [1, 4], ttfts: [0], wallTtft: 50, rounds: 1 };

/** `BENCH_FORK_SIZES=20000 BENCH_FORK_CHILDREN=4,16 BENCH_FORK_TTFTS=300` narrows the grid. */
function fromEnvironment(grid: Grid): Grid {
  const list = (name: string) =>
    process.env[name]
      ?.split(',')
      .map(Number)
      .filter((value) => Number.isFinite(value));
  return {
    ...grid,
    sizes: list('BENCH_FORK_SIZES') ?? grid.sizes,
    children: list('BENCH_FORK_CHILDREN') ?? grid.children,
    ttfts: list('BENCH_FORK_TTFTS') ?? grid.ttfts,
  };
}

const round = (value: number, digits = 4) => Math.round(value * 10 ** digits) / 10 ** digits;
const label = (tokens: number) => (tokens >= 1000 ? `${round(tokens / 1000, 1)}k` : String(tokens));
const directive = (index: number, children: number) =>
  `Review part ${index + 1} of ${children} of the sources read above for unhandled errors and report each with its file and line.`;

/** What the main agent reads (the same Read inputs the history was built from) and the history as text. */
type ParentScript = {
  batches: Array<Array<{ file_path: string; limit?: number }>>;
  contextText: string;
  tokens: number;
};

function scriptOf(history: readonly Wire[]): ParentScript {
  const reads = history.flatMap((message) =>
    message.content
      .filter((block) => block.type === 'tool_use')
      .map((block) => block.input as { file_path: string; limit?: number }),
  );
  const batches: ParentScript['batches'] = [];
  for (let index = 0; index < reads.length; index += READS_PER_TURN)
    batches.push(reads.slice(index, index + READS_PER_TURN));
  return { batches, contextText: historyAsText(history), tokens: messageTokens(history) };
}

type State = { script: ParentScript; way: Way; children: number; background: boolean };

function fanOutCalls(state: State) {
  return Array.from({ length: state.children }, (_, index) => {
    const prompt = directive(index, state.children);
    const input: Record<string, unknown> = { description: `Review part ${index + 1}`, prompt };
    if (state.way.context) input.subagent_type = 'general-purpose';
    if (state.background) input.run_in_background = true;
    return { type: 'tool_use' as const, name: 'Agent', input };
  });
}

function createPolicy(state: State, files: readonly string[]): Policy {
  return (request) => {
    if (request.agent === undefined) {
      const { batches } = state.script;
      if (request.turnIndex < batches.length) {
        return batches[request.turnIndex]!.map((input) => ({
          type: 'tool_use' as const,
          name: 'Read',
          input,
        }));
      }
      if (request.turnIndex === batches.length) {
        return [
          { type: 'text', text: `Splitting the review into ${state.children} parts.` },
          ...fanOutCalls(state),
        ];
      }
      return 'The review is split and done.';
    }
    if (request.toolResults.some((result) => result.toolName === 'Read')) {
      return 'Scope: my part of the review.\nResult: no unhandled errors in that part.';
    }
    return [
      {
        type: 'tool_use',
        name: 'Read',
        input: { file_path: files[request.index % files.length]! },
      },
    ];
  };
}

type Totals = { read: number; written: number; uncached: number; total: number };

function sumUsage(entries: readonly JournalEntry[]): Totals {
  const totals = { read: 0, written: 0, uncached: 0, total: 0 };
  for (const entry of entries) {
    const usage = entry.usage!;
    totals.read += usage.cache_read_input_tokens;
    totals.written += usage.cache_creation_input_tokens;
    totals.uncached += usage.input_tokens;
  }
  totals.total = totals.read + totals.written + totals.uncached;
  return totals;
}

const billed = (totals: Totals) => totals.written * WRITE + totals.read * READ + totals.uncached;

/**
 * Billed units at the ceiling: only the `own` new tokens (the directive lines, and over all
 * turns each child's later turn) written, every other input token read from the cache.
 */
const ceilingBilled = (totals: Totals, own: number) => own * WRITE + (totals.total - own) * READ;

type Outcome = {
  turn1: Totals;
  all: Totals;
  ownTurn1: number;
  ownAll: number;
  fanOutMs: number;
  parentLastInput: number;
};

function describeStall(sim: Sim, started: number, ended: number): string {
  const statuses = sim.journal.entries.map(
    (entry) =>
      `${entry.headers['x-delegate-agent'] ?? 'main'}:${entry.status}${entry.error ? ` (${entry.error.message.slice(0, 120)})` : ''}`,
  );
  return `children did not all finish within 180 s: ${started} started, ${ended} ended; last requests: ${statuses.slice(-12).join(', ')}`;
}

/**
 * True for a child's first request: its last message holds no tool result (a fresh agent's
 * prompt), or the fork's placeholders with the fork rules notice; a second request ends
 * with the Read result.
 */
function isFirstRequest(entry: JournalEntry): boolean {
  const messages = (entry.body as { messages: Array<{ content: unknown }> }).messages;
  const content = messages.at(-1)?.content;
  if (!Array.isArray(content)) return true;
  const blocks = content as Array<{ type?: string; text?: string }>;
  if (!blocks.some((block) => block.type === 'tool_result')) return true;
  return blocks.some(
    (block) => block.type === 'text' && block.text?.startsWith('<fork-worker-rules>'),
  );
}

/**
 * The session's agents. For `fresh-context` the parent's context reaches each child as its
 * definition's `initialPrompt`, which opens the child's prompt (`initialPrompt`, a blank
 * line, then the Agent call's prompt): the same bytes as a prompt carrying the context,
 * which a model could not write into an Agent call (20k tokens and more exceed its output cap).
 */
function definitionsFor(state: State) {
  const agents = getBuiltInAgents().map((agent) =>
    state.way.context === 'text' && agent.agentType === 'general-purpose'
      ? { ...agent, initialPrompt: state.script.contextText }
      : agent,
  );
  return { activeAgents: agents, allAgents: agents };
}

/** One way at one size and fan-out: a fresh session on an empty cache; returns the children's figures. */
async function runWay(options: { sim: Sim; state: State; home: string }): Promise<Outcome> {
  const { sim, state } = options;
  sim.cache.clear();
  sim.journal.clear();
  const session = await DelegateSession.create({
    cwd: REPO,
    homeDir: options.home,
    client: createApiClient({ apiKey: 'bench', baseURL: sim.url, maxRetries: 2 }),
    agentDefinitions: definitionsFor(state),
    transcriptDir: false,
    forkEnabled: true,
    maxBackgroundAgents: Math.max(8, state.children),
    ...(state.way.layout ? { forkLayout: state.way.layout } : {}),
  });
  const started: number[] = [];
  const ended: number[] = [];
  let allEnded!: () => void;
  const done = new Promise<void>((resolveDone) => (allEnded = resolveDone));
  session.events.on((event: AgentEvent) => {
    if (event.type === 'agent.started') started.push(performance.now());
    if (event.type === 'agent.completed' || event.type === 'agent.failed') {
      ended.push(performance.now());
      if (ended.length === state.children) allEnded();
    }
  });
  try {
    await session.send(
      'Review the sources of this repository for unhandled errors; read them first.',
    );
    await Promise.race([
      done,
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(describeStall(sim, started.length, ended.length))),
          180_000,
        ).unref(),
      ),
    ]);
  } finally {
    session.abort();
    await session.flush();
  }
  const entries = sim.journal.entries.filter((entry) => entry.status === 200 && entry.usage);
  const children = entries.filter((entry) => entry.headers['x-delegate-agent'] !== undefined);
  const turn1Entries = children.filter(isFirstRequest);
  const turn2Entries = children.filter((entry) => !isFirstRequest(entry));
  const turn1 = sumUsage(turn1Entries);
  const all = sumUsage(children);
  const ownTurn1 = Array.from(
    { length: state.children },
    (_, index) =>
      estimateTextTokens(buildForkDirectiveLine(directive(index, state.children))) +
      TOKEN_OVERHEAD.block,
  ).reduce((sum, value) => sum + value, 0);
  const ownAll = ownTurn1 + (sumUsage(turn2Entries).total - turn1.total);
  const main = entries.filter((entry) => entry.headers['x-delegate-agent'] === undefined);
  const parentLast = main[state.script.batches.length];
  return {
    turn1,
    all,
    ownTurn1,
    ownAll,
    fanOutMs: Math.max(...ended) - Math.min(...started),
    parentLastInput: parentLast ? sumUsage([parentLast]).total : 0,
  };
}

function figures(prefix: string, totals: Totals, own: number): Record<string, number> {
  const share = totals.read / totals.total;
  const ceiling = 1 - own / totals.total;
  return {
    [`${prefix}ReadTokens`]: totals.read,
    [`${prefix}WrittenTokens`]: totals.written,
    [`${prefix}UncachedTokens`]: totals.uncached,
    [`${prefix}ShareFromCache`]: round(share),
    [`${prefix}BilledUnits`]: round(billed(totals), 1),
    [`${prefix}CeilingShare`]: round(ceiling),
    [`${prefix}ShareOfCeiling`]: round(share / ceiling),
    [`${prefix}CeilingBilledUnits`]: round(ceilingBilled(totals, own), 1),
  };
}

type Cell = {
  size: number;
  tokens: number;
  children: number;
  ttft: number;
  way: Way;
  outcome: Outcome;
};

async function grid(spec: Grid, scripts: Map<number, ParentScript>, home: string): Promise<Cell[]> {
  const files = smallFiles();
  const cells: Cell[] = [];
  for (const ttft of spec.ttfts) {
    const state: State = {
      script: scripts.get(spec.sizes[0]!)!,
      way: WAYS[0]!,
      children: 1,
      background: false,
    };
    const sim = await startSim({
      policy: createPolicy(state, files),
      pacing: { timeToFirstTokenMs: ttft },
    });
    try {
      for (const size of spec.sizes) {
        for (const children of spec.children) {
          for (const way of WAYS) {
            Object.assign(state, { script: scripts.get(size)!, way, children, background: false });
            const started = performance.now();
            const outcome = await runWay({ sim, state, home });
            cells.push({ size, tokens: state.script.tokens, children, ttft, way, outcome });
            process.stderr.write(
              `  … ${label(size)} / ${children} / ${ttft} ms / ${way.key}: ${Math.round(performance.now() - started)} ms\n`,
            );
          }
        }
      }
    } finally {
      await sim.close();
    }
  }
  return cells;
}

function find(
  cells: readonly Cell[],
  where: { size: number; children: number; ttft: number; key: WayKey },
) {
  return cells.find(
    (cell) =>
      cell.size === where.size &&
      cell.children === where.children &&
      cell.ttft === where.ttft &&
      cell.way.key === where.key,
  );
}

function conditionsOf(cell: Cell): string {
  return `api-sim on loopback (real SDK, streaming), ${cell.ttft} ms to first token; the main agent read ${label(cell.tokens)} tokens of this repository's sources with the real Read tool (${READS_PER_TURN} reads per turn), then started ${cell.children} children in one assistant message; each child makes 2 requests (a Read of a package.json, then its report); every way on an empty cache after its own parent history`;
}

function cellResult(cell: Cell, cells: readonly Cell[]): BenchResult {
  const { outcome } = cell;
  const metrics: Record<string, number> = {
    ...figures('turn1', outcome.turn1, outcome.ownTurn1),
    ...figures('allTurns', outcome.all, outcome.ownAll),
    fanOutMs: round(outcome.fanOutMs, 1),
  };
  const targets: BenchTarget[] = [];
  const fresh = find(cells, { ...cell, key: 'fresh-context' });
  if (cell.way.layout && fresh) {
    metrics.turn1BilledVsFreshWithContext = round(
      billed(outcome.turn1) / billed(fresh.outcome.turn1),
    );
    metrics.allTurnsBilledVsFreshWithContext = round(
      billed(outcome.all) / billed(fresh.outcome.all),
    );
    // The same ratio at the ceiling: no layout can bill less than this, so a target it misses
    // is out of reach in this cell (the fixed prefix read at 0.1 and the directive lines
    // written at 1.25 already cost more than 0.13 of what fresh agents pay).
    metrics.turn1CeilingBilledVsFreshWithContext = round(
      ceilingBilled(outcome.turn1, outcome.ownTurn1) / billed(fresh.outcome.turn1),
    );
    metrics.allTurnsCeilingBilledVsFreshWithContext = round(
      ceilingBilled(outcome.all, outcome.ownAll) / billed(fresh.outcome.all),
    );
    targets.push(
      withReachability(
        checkTarget(metrics, 'turn1BilledVsFreshWithContext', '<=', 0.13),
        metrics.turn1CeilingBilledVsFreshWithContext,
      ),
    );
    targets.push(
      withReachability(
        checkTarget(metrics, 'allTurnsBilledVsFreshWithContext', '<=', 0.13),
        metrics.allTurnsCeilingBilledVsFreshWithContext,
      ),
    );
    const shareTarget =
      cell.size === 20_000 && cell.children === 4
        ? 0.99
        : cell.size === 41_700 && (cell.children === 4 || cell.children === 16)
          ? 0.995
          : undefined;
    if (shareTarget !== undefined)
      targets.push(checkTarget(metrics, 'turn1ShareFromCache', '>=', shareTarget));
  }
  return {
    name: `fork-cache (runtime): ${label(cell.size)} history, ${cell.children} children, ${cell.ttft} ms TTFT, ${cell.way.label}`,
    metrics,
    conditions: conditionsOf(cell),
    targets,
    notes: {
      way: cell.way.key,
      historyTokens: cell.tokens,
      parentLastRequestInputTokens: outcome.parentLastInput,
      children: cell.children,
      timeToFirstTokenMs: cell.ttft,
      turnsPerChild: 2,
      source: "api-sim's cache model and token estimator (estimates of the real API)",
    },
  };
}

/** The default layout against the other, cell by cell: never below it is the target. */
function defaultVersusOthers(cells: readonly Cell[], defaultLayout: ForkLayout): BenchResult {
  const metrics: Record<string, number> = {};
  const targets: BenchTarget[] = [];
  let worst = Number.POSITIVE_INFINITY;
  let worstBilled = 0;
  for (const cell of cells.filter((candidate) => candidate.way.key === defaultLayout)) {
    for (const other of FORK_LAYOUTS.filter((layout) => layout !== defaultLayout)) {
      const found = find(cells, { ...cell, key: other });
      if (!found) continue;
      const share = cell.outcome.turn1.read / cell.outcome.turn1.total;
      const otherShare = found.outcome.turn1.read / found.outcome.turn1.total;
      worst = Math.min(worst, share - otherShare);
      worstBilled = Math.max(worstBilled, billed(cell.outcome.all) / billed(found.outcome.all));
    }
  }
  metrics.worstTurn1ShareDifferenceDefaultMinusOther = round(worst);
  metrics.worstAllTurnsBilledDefaultOverOther = round(worstBilled);
  // Issue 17's target compares the default with the per-child layout; with per-child the
  // default it holds by construction, so the comparison with the other layout is reported.
  metrics.defaultIsPerChild = defaultLayout === 'per-child' ? 1 : 0;
  return {
    name: `fork-cache (runtime): the default layout ('${defaultLayout}') against the other layout, worst cell of the grid`,
    metrics,
    conditions:
      "every size, fan-out and latency of the grid above, same run; share difference = the default's turn-1 share from cache minus the other layout's (negative: the other reads more), billed = the default's billed input units over all turns over the other's",
    targets,
    notes: { defaultLayout, source: "api-sim's cache model (estimate)" },
  };
}

/** Fan-out wall time: 4 forks in each layout against 4 background general-purpose agents. */
async function wallTime(spec: Grid, script: ParentScript, home: string): Promise<BenchResult> {
  const files = smallFiles();
  const state: State = { script, way: WAYS[0]!, children: 4, background: false };
  const sim = await startSim({
    policy: createPolicy(state, files),
    pacing: { timeToFirstTokenMs: spec.wallTtft },
  });
  const times = new Map<string, number[]>();
  const ways = [
    ...FORK_LAYOUTS.map((layout) => ({
      name: layout,
      way: WAYS.find((way) => way.key === layout)!,
      background: false,
    })),
    { name: 'background', way: WAYS.find((way) => way.key === 'fresh-prompt')!, background: true },
  ];
  try {
    for (let index = 0; index < spec.rounds; index++) {
      for (const entry of ways) {
        Object.assign(state, { way: entry.way, background: entry.background, children: 4 });
        const outcome = await runWay({ sim, state, home });
        times.set(entry.name, [...(times.get(entry.name) ?? []), outcome.fanOutMs]);
      }
    }
  } finally {
    await sim.close();
  }
  const median = (name: string) => {
    const sorted = [...(times.get(name) ?? [])].sort((left, right) => left - right);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  const background = median('background');
  const metrics: Record<string, number> = { backgroundAgentsMs: round(background, 1) };
  const targets: BenchTarget[] = [];
  for (const layout of FORK_LAYOUTS) {
    const key = layout === 'per-child' ? 'perChild' : 'sharedMessage';
    metrics[`${key}ForksMs`] = round(median(layout), 1);
    metrics[`${key}OverBackground`] = round(median(layout) / background, 3);
    targets.push(checkTarget(metrics, `${key}OverBackground`, '<=', 1.15));
  }
  return {
    name: `fork-cache (runtime): fan-out wall time, 4 children x 2 requests, ${spec.wallTtft} ms TTFT, ${label(script.tokens)} history`,
    metrics,
    conditions: `api-sim with ${spec.wallTtft} ms to first token; from the first agent.started to the last agent.completed; 4 foreground forks (each layout) against 4 general-purpose agents started with run_in_background (prompt only); median of ${spec.rounds} alternating rounds`,
    targets,
    notes: { source: 'wall clock on a shared machine: compare the ratios' },
  };
}

export default async function bench(options: { quick?: boolean } = {}): Promise<BenchResult[]> {
  const spec = fromEnvironment(options.quick ? QUICK : FULL);
  const home = await mkdtemp(join(tmpdir(), 'delegate-bench-forks-'));
  try {
    const read = createReader();
    const scripts = new Map<number, ParentScript>();
    for (const size of spec.sizes) scripts.set(size, scriptOf(await buildHistory(size, read)));
    const cells = await grid(spec, scripts, home);
    const defaultLayout = (await import('@delegate/fork-cache')).DEFAULT_FORK_LAYOUT;
    const wallScript = scripts.get(spec.sizes.includes(20_000) ? 20_000 : spec.sizes[0]!)!;
    return [
      ...cells.map((cell) => cellResult(cell, cells)),
      defaultVersusOthers(cells, defaultLayout),
      await wallTime(spec, wallScript, home),
    ];
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
