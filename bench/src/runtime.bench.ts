import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { rules, startSim } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { createRootToolUseContext } from '@delegate/context-isolation';
import {
  type AgentEvent,
  type AssistantMessage,
  type Tool,
  createUserMessage,
  createUuid,
} from '@delegate/core';
import { DelegateSession, createApiClient, createCanUseTool, query } from '@delegate/runtime';
import { UsageLedger, WireConversation, buildMessagesRequest } from '@delegate/runtime/internal';
import { z } from 'zod';
import { type BenchResult, type BenchTarget, checkTarget } from './harness.js';

// `pnpm bench runtime --quick` (or BENCH_QUICK=1) runs every scenario at a tiny size.
const QUICK_FROM_ENV = process.argv.includes('--quick') || process.env['BENCH_QUICK'] === '1';
const benchDir = fileURLToPath(new URL('..', import.meta.url));

const noop: Tool = {
  name: 'Noop',
  inputSchema: z.object({ n: z.number() }),
  description: () => 'Does nothing.',
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: async (input: { n: number }) => ({ content: `ok ${input.n}` }),
};

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

function now(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

function round(value: number, digits = 3): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/** A script of `turns` Noop tool calls, then a closing text. */
function loopPolicy(turns: number) {
  return rules([
    { match: { when: (request) => request.turnIndex >= turns }, reply: 'finished' },
    {
      match: {},
      reply: (request) => [{ type: 'tool_use', name: 'Noop', input: { n: request.turnIndex } }],
    },
  ]);
}

let youngGc: ((options: { type: 'minor'; execution: 'sync' }) => void) | undefined;

/** A scavenge now (V8's `gc({ type: 'minor' })`, exposed on first use). */
function collectYoungGeneration(): void {
  if (!youngGc) {
    setFlagsFromString('--expose-gc');
    youngGc = runInNewContext('gc') as typeof youngGc;
  }
  youngGc!({ type: 'minor', execution: 'sync' });
}

/** Time of one turn of each side, in milliseconds, and the GC pauses inside it. */
type PairedTurns = { loopMs: number[]; rawMs: number[]; loopGcMs: number[]; rawGcMs: number[] };

/** Milliseconds of `pauses` (start, end) that fall inside `window` (start, end). */
function pausedWithin(window: readonly [number, number], pauses: ReadonlyArray<[number, number]>) {
  let paused = 0;
  for (const [start, end] of pauses)
    paused += Math.max(0, Math.min(end, window[1]) - Math.max(start, window[0]));
  return paused;
}

/**
 * One query loop of `turns` tool turns, each turn paired with the same request sent straight
 * through the SDK to a second simulator right after it (interleaved, so both sides of a pair
 * run under the same machine load). A loop turn runs from resuming the loop after one
 * request started to the next request starting; the replay is timed while the loop waits.
 * Both simulators see the same requests in the same order, so their prompt caches (and their
 * work per request) match. Their journals are cleared every turn: they would otherwise keep
 * every body (O(turns²) memory), and the garbage collector's time would grow with it.
 */
async function timePairedTurns(turns: number, cwd: string): Promise<PairedTurns> {
  const sim = await startSim({ policy: loopPolicy(turns) });
  const replay = await startSim({ policy: loopPolicy(turns) });
  const pauses: Array<[number, number]> = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      pauses.push([entry.startTime, entry.startTime + entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    const client = createApiClient({ apiKey: 'bench', baseURL: sim.url });
    const rawClient = createApiClient({ apiKey: 'bench', baseURL: replay.url });
    const context = createRootToolUseContext({ cwd, tools: [noop], model: 'claude-sonnet-5-5' });
    const loopWindows: Array<[number, number]> = [];
    const rawWindows: Array<[number, number]> = [];
    const sendRaw = async (body: Anthropic.MessageCreateParamsStreaming): Promise<void> => {
      const start = performance.now();
      const stream = await rawClient.messages.create({ ...body, stream: true });
      for await (const _event of stream) {
        // drain
      }
      rawWindows.push([start, performance.now()]);
    };
    let previous: Anthropic.MessageCreateParamsStreaming | undefined;
    let resumedAt = 0;
    for await (const event of query({
      client,
      messages: [createUserMessage({ content: 'loop' })],
      systemPrompt: ['You loop.'],
      toolUseContext: context,
      canUseTool: createCanUseTool(),
      querySource: 'bench',
    })) {
      if (event.type !== 'stream_request_start') continue;
      const at = performance.now();
      if (previous) {
        loopWindows.push([resumedAt, at]);
        await sendRaw(previous);
      }
      previous = event.request;
      sim.journal.clear();
      replay.journal.clear();
      // Each pair starts with an empty young generation, so the scavenges that the
      // history-sized garbage of the simulator and the SDK forces do not lock onto one side.
      collectYoungGeneration();
      resumedAt = performance.now();
    }
    loopWindows.push([resumedAt, performance.now()]);
    if (previous) await sendRaw(previous);
    // GC entries are delivered asynchronously: let the last ones arrive.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const duration = ([start, end]: [number, number]): number => end - start;
    return {
      loopMs: loopWindows.map(duration),
      rawMs: rawWindows.map(duration),
      loopGcMs: loopWindows.map((window) => pausedWithin(window, pauses)),
      rawGcMs: rawWindows.map((window) => pausedWithin(window, pauses)),
    };
  } finally {
    observer.disconnect();
    await sim.close();
    await replay.close();
  }
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/**
 * The runtime's own cost per turn: the query loop's time per turn minus the time the same
 * request takes when sent straight through the SDK and drained, paired turn by turn and
 * interleaved, after a warm-up round. Garbage-collection pauses are taken out of both sides
 * and reported on their own: the simulator and the SDK allocate in proportion to the
 * history on every request, so at 600 turns a pair holds several milliseconds of GC, and
 * which side of the pair a pause lands on is chance (it decided the sign of the growth).
 */
export async function loopOverhead(turns: number): Promise<BenchResult> {
  const cwd = await mkdtemp(join(tmpdir(), 'delegate-bench-'));
  try {
    await timePairedTurns(Math.min(turns, 40), cwd);
    const paired = await timePairedTurns(turns, cwd);
    const count = Math.min(paired.loopMs.length, paired.rawMs.length);
    const withoutGc = (times: number[], gc: number[]): number[] =>
      times.slice(0, count).map((time, index) => time - (gc[index] ?? 0));
    const loop = withoutGc(paired.loopMs, paired.loopGcMs);
    const raw = withoutGc(paired.rawMs, paired.rawGcMs);
    const overhead = loop.map((turn, index) => turn - raw[index]!);
    const overheadWithGc = paired.loopMs
      .slice(0, count)
      .map((turn, index) => turn - paired.rawMs[index]!);
    const tenth = Math.max(1, Math.floor(count / 10));
    const from = Math.min(10, Math.max(0, count - tenth));
    const early = <T>(values: readonly T[]): T[] => values.slice(from, from + tenth);
    const late = <T>(values: readonly T[]): T[] => values.slice(count - tenth, count);
    const metrics = {
      overheadMsPerTurnP50: round(median(overhead)),
      overheadMsPerTurnP99: round(percentile(overhead, 0.99)),
      overheadMsTurns10OnP50: round(median(early(overhead))),
      overheadMsLastTenthP50: round(median(late(overhead))),
      growthMsLastTenthMinusTurns10On: round(median(late(overhead)) - median(early(overhead))),
      growthWithGcMsLastTenthMinusTurns10On: round(
        median(late(overheadWithGc)) - median(early(overheadWithGc)),
      ),
      gcMsPerPairTurns10On: round(mean(early(paired.loopGcMs)) + mean(early(paired.rawGcMs))),
      gcMsPerPairLastTenth: round(mean(late(paired.loopGcMs)) + mean(late(paired.rawGcMs))),
      gcMsPerLoopTurnLastTenth: round(mean(late(paired.loopGcMs))),
      gcMsPerRawTurnLastTenth: round(mean(late(paired.rawGcMs))),
      loopMsPerTurnP50: round(median(paired.loopMs)),
      rawSdkMsPerTurnP50: round(median(paired.rawMs)),
    };
    const targets: BenchTarget[] = [];
    if (turns === 40) targets.push(checkTarget(metrics, 'overheadMsPerTurnP50', '<=', 1));
    if (turns >= 600) targets.push(checkTarget(metrics, 'overheadMsPerTurnP50', '<=', 1.5));
    return {
      name: `runtime: per-turn overhead of query over a raw-SDK loop, ${turns} tool turns`,
      metrics,
      conditions: `api-sim on loopback in the same process, zero model latency, ${turns} turns of one Noop tool call each, after a warm-up round; overhead = loop turn time minus the same request body sent and drained through the SDK to a second simulator right after it (interleaved pairs), GC pauses taken out of both sides (reported as gcMs*); growth = median of the last tenth minus median of the tenth from turn 10 on`,
      targets,
      notes: {
        requests: count,
        targets: 'p50 <= 1 ms at 40 turns, <= 1.5 ms at 600 turns, flat (last tenth ~ turns 10 on)',
        reference: 'Claude Code adds 44-46 ms per turn (issue 17)',
      },
    };
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

/** The stream of one canned response: a Noop call, or `finished` once `turns` calls were made. */
function cannedStream(turn: number, turns: number): string {
  const event = (type: string, data: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const usage = { input_tokens: 10, output_tokens: 5 };
  const last = turn >= turns;
  return [
    event('message_start', {
      message: {
        id: `msg_${turn}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-5-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    }),
    last
      ? event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
      : event('content_block_start', {
          index: 0,
          content_block: { type: 'tool_use', id: `toolu_${turn}`, name: 'Noop', input: {} },
        }),
    last
      ? event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'finished' } })
      : event('content_block_delta', {
          index: 0,
          delta: { type: 'input_json_delta', partial_json: `{"n":${turn}}` },
        }),
    event('content_block_stop', { index: 0 }),
    event('message_delta', {
      delta: { stop_reason: last ? 'end_turn' : 'tool_use', stop_sequence: null },
      usage: { output_tokens: 5 },
    }),
    event('message_stop', {}),
  ].join('');
}

/** An SDK client whose fetch answers at once from `cannedStream` (no server, no simulator). */
function cannedClient(turns: number): Anthropic {
  return new Anthropic({
    apiKey: 'bench',
    baseURL: 'http://127.0.0.1:9',
    maxRetries: 0,
    fetch: async (_url, init) => {
      const body = JSON.parse(String(init?.body)) as { messages: Array<{ role: string }> };
      const turn = body.messages.filter((message) => message.role === 'assistant').length;
      return new Response(cannedStream(turn, turns), {
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'request-id': `req_${turn}` },
      });
    },
  });
}

/**
 * The same pairing as `loopOverhead` without a server: the SDK's fetch answers from canned
 * streams, so each side's time is the SDK's work (serializing the body, which grows with the
 * history, and parsing the stream) plus, on the loop side, the runtime's. Without the
 * simulator's per-request work (hashing every block) the runtime's share is resolved to tens
 * of microseconds; GC pauses are taken out of both sides.
 */
export async function sdkOnlyOverhead(turns: number): Promise<BenchResult> {
  const cwd = await mkdtemp(join(tmpdir(), 'delegate-bench-'));
  const pauses: Array<[number, number]> = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      pauses.push([entry.startTime, entry.startTime + entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  const round1 = async (): Promise<{ loopMs: number[]; rawMs: number[] }> => {
    const rawClient = cannedClient(turns);
    const loopWindows: Array<[number, number]> = [];
    const rawWindows: Array<[number, number]> = [];
    const sendRaw = async (body: Anthropic.MessageCreateParamsStreaming): Promise<void> => {
      const start = performance.now();
      const stream = await rawClient.messages.create({ ...body, stream: true });
      for await (const _event of stream) {
        // drain
      }
      rawWindows.push([start, performance.now()]);
    };
    let previous: Anthropic.MessageCreateParamsStreaming | undefined;
    let resumedAt = 0;
    for await (const event of query({
      client: cannedClient(turns),
      messages: [createUserMessage({ content: 'loop' })],
      systemPrompt: ['You loop.'],
      toolUseContext: createRootToolUseContext({
        cwd,
        tools: [noop],
        model: 'claude-sonnet-5-5',
      }),
      canUseTool: createCanUseTool(),
      querySource: 'bench',
    })) {
      if (event.type !== 'stream_request_start') continue;
      const at = performance.now();
      if (previous) {
        loopWindows.push([resumedAt, at]);
        await sendRaw(previous);
      }
      previous = event.request;
      resumedAt = performance.now();
    }
    loopWindows.push([resumedAt, performance.now()]);
    if (previous) await sendRaw(previous);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const net = (window: [number, number]): number =>
      window[1] - window[0] - pausedWithin(window, pauses);
    return { loopMs: loopWindows.map(net), rawMs: rawWindows.map(net) };
  };
  try {
    await round1();
    const { loopMs, rawMs } = await round1();
    const count = Math.min(loopMs.length, rawMs.length);
    const overhead = loopMs.slice(0, count).map((turn, index) => turn - rawMs[index]!);
    const tenth = Math.max(1, Math.floor(count / 10));
    const from = Math.min(10, Math.max(0, count - tenth));
    const early = <T>(values: readonly T[]): T[] => values.slice(from, from + tenth);
    const late = <T>(values: readonly T[]): T[] => values.slice(count - tenth, count);
    return {
      name: `runtime: per-turn overhead of query over the SDK alone (canned responses, no server), ${turns} tool turns`,
      metrics: {
        overheadMsPerTurnP50: round(median(overhead)),
        overheadMsTurns10OnP50: round(median(early(overhead))),
        overheadMsLastTenthP50: round(median(late(overhead))),
        growthMsLastTenthMinusTurns10On: round(median(late(overhead)) - median(early(overhead))),
        sdkMsPerRequestTurns10OnP50: round(median(early(rawMs))),
        sdkMsPerRequestLastTenthP50: round(median(late(rawMs))),
      },
      conditions: `the real SDK with a fetch that answers at once from canned streams (no HTTP, no simulator), ${turns} turns of one Noop tool call each, after a warm-up round; overhead = loop turn time minus the same request body sent and drained through the SDK right after it (interleaved pairs), GC pauses taken out of both sides; growth as above`,
      notes: {
        requests: count,
        reading:
          "the SDK's own time per request grows with the history (it serializes the whole body); the overhead should not",
      },
    };
  } finally {
    observer.disconnect();
    await rm(cwd, { recursive: true, force: true });
  }
}

/**
 * The runtime's own per-turn work, without the SDK or a server: adding a turn's two messages
 * to the conversation and building the next request, at the start and at the end of a long
 * conversation. This is the part that used to grow with the turn count.
 */
export async function requestBuilding(turns: number): Promise<BenchResult> {
  const conversation = new WireConversation([createUserMessage({ content: 'loop' })]);
  const times: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const start = now();
    const assistant: AssistantMessage = {
      type: 'assistant',
      uuid: createUuid(),
      timestamp: new Date().toISOString(),
      message: {
        id: `msg_${turn}`,
        role: 'assistant',
        model: 'claude-sonnet-5-5',
        content: [{ type: 'tool_use', id: `toolu_${turn}`, name: 'Noop', input: { n: turn } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 10, output_tokens: 5 },
      },
    };
    conversation.append(assistant);
    conversation.append(
      createUserMessage({
        content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: `ok ${turn}` }],
      }),
    );
    buildMessagesRequest({
      model: 'claude-sonnet-5-5',
      systemPrompt: ['You loop.'],
      messages: conversation.messages(),
      tools: [],
    });
    times.push(now() - start);
  }
  const tenth = Math.max(1, Math.floor(turns / 10));
  return {
    name: `runtime: conversation upkeep and request building per turn, ${turns} turns`,
    metrics: {
      microsecondsPerTurnTurns10OnP50: round(median(times.slice(10, 10 + tenth)) * 1000, 1),
      microsecondsPerTurnLastTenthP50: round(median(times.slice(-tenth)) * 1000, 1),
    },
    notes: {
      conditions:
        'in process, no SDK and no server: WireConversation.append of a tool call and its result, then buildMessagesRequest',
    },
  };
}

/**
 * The budget bookkeeping of one response, in a large tree: recording its usage (the agent and
 * every ancestor) and the two checks the loop makes around a request (the shortfall and what
 * is left), against summing the same usages alone.
 */
export async function budgetBookkeeping(agents: number, responses: number): Promise<BenchResult> {
  const ledger = new UsageLedger({
    sessionBudget: { maxTokens: 1e12, maxCostUsd: 1e9 },
    model: 'sonnet',
  });
  for (let index = 0; index < agents; index++) {
    ledger.register({
      agentId: `a${index}`,
      agentType: 'worker',
      description: 'work',
      model: 'claude-sonnet-5-5',
      budget: { maxTokens: 1e10 },
    });
  }
  const usage = {
    input_tokens: 20,
    output_tokens: 200,
    cache_creation_input_tokens: 500,
    cache_read_input_tokens: 40_000,
  };
  const ids = Array.from({ length: responses }, (_, index) => `a${(index * 7919) % agents}`);
  const start = now();
  for (const id of ids) {
    ledger.shortfall(id, { tokens: 40_000, costUsd: 0.01 });
    ledger.record(id, usage, 'claude-sonnet-5-5');
    ledger.remaining(id);
  }
  const guarded = now() - start;
  let sum = 0;
  const floorStart = now();
  for (const _id of ids)
    sum += usage.input_tokens + usage.output_tokens + usage.cache_read_input_tokens;
  const floor = now() - floorStart;
  return {
    name: `runtime: budget bookkeeping per response, ${agents} agents, ${responses} responses`,
    metrics: {
      microsecondsPerResponse: round((guarded / responses) * 1000, 2),
      floorMicrosecondsPerResponse: round((floor / responses) * 1000, 3),
    },
    notes: {
      checksum: sum > 0,
      conditions:
        'in process: UsageLedger.shortfall + record + remaining per response (a session budget and one per agent, all under the main agent), against a plain sum of the same token counts',
    },
  };
}

/** A client whose every request's start time is recorded, by agent. */
function timedClient(
  url: string,
  starts: Array<{ agent: string | undefined; at: number }>,
): Anthropic {
  return new Anthropic({
    apiKey: 'bench',
    baseURL: url,
    maxRetries: 0,
    fetch: async (input, init) => {
      const headers = new Headers(init?.headers);
      starts.push({ agent: headers.get('x-delegate-agent') ?? undefined, at: now() });
      return fetch(input, init);
    },
  });
}

/**
 * Per spawn: from the Agent tool call starting (its `agent.tool_use` event) to the child's
 * first request leaving (resolution, tool filtering, context, prompts, task and events).
 */
export async function spawnOverhead(spawns: number): Promise<BenchResult> {
  const sim = await startSim({
    policy: rules([
      {
        match: { when: (request) => request.agent === undefined && request.turnIndex < spawns },
        reply: (request) => [
          {
            type: 'tool_use',
            name: 'Agent',
            input: {
              description: `job ${request.turnIndex}`,
              prompt: `Do job ${request.turnIndex}`,
              subagent_type: 'general-purpose',
            },
          },
        ],
      },
      { match: {}, reply: 'done' },
    ]),
  });
  const cwd = await mkdtemp(join(tmpdir(), 'delegate-bench-'));
  try {
    const starts: Array<{ agent: string | undefined; at: number }> = [];
    const session = await DelegateSession.create({
      cwd,
      homeDir: cwd,
      client: timedClient(sim.url, starts),
      agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
      transcriptDir: false,
    });
    const calls: number[] = [];
    session.events.on((event) => {
      if (event.type === 'agent.tool_use' && event.toolName === 'Agent' && event.agentId === 'main')
        calls.push(now());
    });
    await session.send('start the jobs');
    const childStarts = starts
      .filter((start) => start.agent === 'general-purpose')
      .map((start) => start.at);
    const perSpawn = calls.map((call, index) => (childStarts[index] ?? call) - call);
    return {
      name: `runtime: per-spawn overhead, ${spawns} foreground general-purpose spawns`,
      metrics: {
        spawnMsP50: round(median(perSpawn)),
        spawnMsP99: round(percentile(perSpawn, 0.99)),
      },
      conditions: `${spawns} spawns, one per main turn; from the Agent tool call starting to the child's first request leaving (resolution, tool filtering, context, prompts, task and events); built-in definitions, built-in tools, no transcripts, api-sim on loopback, zero latency`,
      targets: [],
      notes: {
        target: 'none set by issue 17 (reported beside the reference)',
        reference: 'Claude Code 2.1.328 adds 35-40 ms per warm spawn (issue 17)',
      },
    };
  } finally {
    await sim.close();
    await rm(cwd, { recursive: true, force: true });
  }
}

type Phase = { wallMs: number; cpuMs: number; peakRssBytes: number; loopDelayP99Ms: number };

/** Runs `work` while measuring wall time, CPU time, peak RSS and event-loop delay of this process. */
async function measurePhase(work: () => Promise<void>): Promise<Phase> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  histogram.enable();
  const cpuStart = process.cpuUsage();
  const start = now();
  await work();
  const wallMs = now() - start;
  const cpu = process.cpuUsage(cpuStart);
  histogram.disable();
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssBytes: peak,
    loopDelayP99Ms: histogram.percentile(99) / 1e6,
  };
}

/** Heap in use after a full garbage collection. */
function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

/** The scripted model of the scale scenario, as a module the simulator process loads. */
function scalePolicySource(agents: number, perTurn: number): string {
  const apiSim = import.meta.resolve('@delegate/api-sim');
  return `import { rules } from ${JSON.stringify(apiSim)};
const agents = ${agents};
const perTurn = ${perTurn};
const spawnTurns = Math.ceil(agents / perTurn);
const isMain = (request) => request.agent === undefined;
export default rules([
  {
    match: {
      when: (request) =>
        isMain(request) &&
        request.turnIndex < spawnTurns &&
        (request.turnIndex === 0 || request.toolResults.some((result) => result.toolName === 'Agent')),
    },
    reply: (request) =>
      Array.from({ length: Math.min(perTurn, agents - request.turnIndex * perTurn) }, (_, index) => ({
        type: 'tool_use',
        name: 'Agent',
        input: {
          description: 'job ' + (request.turnIndex * perTurn + index),
          prompt: 'Do job ' + (request.turnIndex * perTurn + index),
          subagent_type: 'general-purpose',
          run_in_background: true,
        },
      })),
  },
  { match: { when: isMain }, reply: 'noted' },
  { match: { when: (request) => request.turnIndex >= 2 }, reply: 'job done' },
  { match: {}, reply: (request) => [{ type: 'tool_use', name: 'Noop', input: { n: request.turnIndex } }] },
]);
`;
}

/** Starts the simulator in its own process (so this process measures only the client side). */
async function startSimProcess(options: {
  policyFile: string;
  ttftMs: number;
}): Promise<{ url: string; stop: () => Promise<void> }> {
  const bin = fileURLToPath(new URL('bin.js', import.meta.resolve('@delegate/api-sim')));
  const child = spawn(
    process.execPath,
    [bin, '--policy', options.policyFile, '--pacing', `${options.ttftMs},0`],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const line = output.split('\n').find((candidate) => candidate.startsWith('http'));
      if (line) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`delegate-sim exited with ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Many background agents in one process: each makes 3 requests (two Noop calls and a
 * report) with 100 ms to first token, against a simulator in another process. The floor
 * sends the same requests straight through the SDK, each conversation in order, all at once.
 */
export async function manyBackgroundAgents(agents: number): Promise<BenchResult> {
  const ttft = 100;
  // A response holds at most 100 Agent calls (more would pass max_tokens), so the main
  // agent starts them over several turns; later main turns answer notifications.
  const perTurn = 100;
  const spawnTurns = Math.ceil(agents / perTurn);
  const cwd = await mkdtemp(join(tmpdir(), 'delegate-bench-'));
  const policyFile = join(cwd, 'scale-policy.mjs');
  await writeFile(policyFile, scalePolicySource(agents, perTurn));
  const sim = await startSimProcess({ policyFile, ttftMs: ttft });
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => {
    warnings.push(`${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  try {
    const sent: Array<{ agent: string | undefined; body: Anthropic.MessageCreateParamsStreaming }> =
      [];
    // Retries cover a kept-alive socket the server closed; both phases get the same.
    const client = new Anthropic({
      apiKey: 'bench',
      baseURL: sim.url,
      maxRetries: 2,
      fetch: async (input, init) => {
        const agent = new Headers(init?.headers).get('x-delegate-agent') ?? undefined;
        if (typeof init?.body === 'string') sent.push({ agent, body: JSON.parse(init.body) });
        return fetch(input, init);
      },
    });
    let session: DelegateSession | undefined = await DelegateSession.create({
      cwd,
      homeDir: cwd,
      client,
      tools: [noop],
      agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
      transcriptDir: false,
      maxBackgroundAgents: agents,
    });
    const baseline = process.memoryUsage().rss;
    let finished = 0;
    let allDone!: () => void;
    const done = new Promise<void>((resolve) => (allDone = resolve));
    session.events.on((event: AgentEvent) => {
      if (event.type === 'agent.completed' || event.type === 'agent.failed')
        if (++finished === agents) allDone();
    });
    const delegate = await measurePhase(async () => {
      await session?.send('start the jobs');
      await done;
    });
    // What the session keeps of its finished agents (records past maxRetainedAgents are
    // compacted): the heap it frees when it is dropped.
    await session.flush();
    const completed = session.tasks.list().filter((task) => task.status === 'completed').length;
    const heapWithSession = heapAfterGc();
    session.abort();
    await session.flush();
    session = undefined;
    const retainedHeap = heapWithSession - heapAfterGc();
    // The floor: the same requests (the main agent's and every child's), replayed chain by
    // chain in order, all chains at once.
    const chains = new Map<string, Anthropic.MessageCreateParamsStreaming[]>();
    for (const request of sent) {
      const key = JSON.stringify(request.body.messages[0]);
      chains.set(key, [...(chains.get(key) ?? []), request.body]);
    }
    const floorClient = createApiClient({ apiKey: 'bench', baseURL: sim.url, maxRetries: 2 });
    const floor = await measurePhase(async () => {
      await Promise.all(
        [...chains.values()].map(async (bodies) => {
          for (const body of bodies) {
            const stream = await floorClient.messages.create({ ...body, stream: true });
            for await (const _event of stream) {
              // drain
            }
          }
        }),
      );
    });
    const ideal = (spawnTurns + 3) * ttft;
    const metrics = {
      wallMs: round(delegate.wallMs, 1),
      wallOverIdeal: round(delegate.wallMs / ideal, 2),
      floorWallMs: round(floor.wallMs, 1),
      cpuMs: round(delegate.cpuMs, 1),
      floorCpuMs: round(floor.cpuMs, 1),
      cpuOverFloor: round(delegate.cpuMs / floor.cpuMs, 2),
      peakRssMb: round(delegate.peakRssBytes / 2 ** 20, 1),
      rssPerAgentKb: round((delegate.peakRssBytes - baseline) / agents / 1024, 1),
      retainedHeapPerAgentKb: round(retainedHeap / agents / 1024, 1),
      eventLoopDelayP99Ms: round(delegate.loopDelayP99Ms, 1),
      floorEventLoopDelayP99Ms: round(floor.loopDelayP99Ms, 1),
      warnings: warnings.length,
      completed,
    };
    return {
      name: `runtime: ${agents} background agents, 3 turns each, ${ttft} ms to first token`,
      metrics,
      conditions: `${agents} general-purpose agents started with run_in_background (${perTurn} per main turn), each making 3 requests with ${ttft} ms to first token against api-sim in its own process; figures of the client process`,
      targets: [
        checkTarget(metrics, 'cpuOverFloor', '<=', 1.3),
        checkTarget(metrics, 'eventLoopDelayP99Ms', '<=', 100),
        checkTarget(metrics, 'warnings', '<=', 0),
      ],
      notes: {
        conditions: `api-sim in its own process with ${ttft} ms to first token; the main agent starts ${perTurn} agents per turn; ideal = (${spawnTurns} main turns + 3 child turns) x ${ttft} ms; CPU, RSS and event-loop delay of the client process only (RSS per agent is measured in a process that already ran the other scenarios; the retained heap is what a full GC frees when the finished session is dropped); the floor replays the same ${[...chains.values()].flat().length} requests (main and children) through the SDK, each conversation in order, all at once`,
        targets: 'CPU <= 1.3x the floor, event-loop delay p99 <= 100 ms, no warning',
        warningsSeen: warnings.slice(0, 3).join(' | ') || 'none',
      },
    };
  } finally {
    process.off('warning', onWarning);
    await sim.stop();
    await rm(cwd, { recursive: true, force: true });
  }
}

/** `import('@delegate/runtime')` (the built package) in a fresh process, against `node -e 0`. */
export async function importCost(runs: number): Promise<BenchResult> {
  const time = (args: string[]): number => {
    const start = now();
    execFileSync(process.execPath, args, { cwd: benchDir, stdio: 'ignore' });
    return now() - start;
  };
  const empty: number[] = [];
  const runtime: number[] = [];
  for (let index = 0; index < runs; index++) {
    empty.push(time(['-e', '0']));
    runtime.push(time(['--input-type=module', '-e', "await import('@delegate/runtime')"]));
  }
  const metrics = {
    importProcessMsP50: round(median(runtime), 1),
    emptyProcessMsP50: round(median(empty), 1),
    importExtraMsP50: round(median(runtime) - median(empty), 1),
  };
  return {
    name: "runtime: import('@delegate/runtime') in a fresh process",
    metrics,
    conditions: `node ${process.version}, ${runs} fresh processes each, interleaved with node -e 0; the built dist`,
    targets: [checkTarget(metrics, 'importExtraMsP50', '<=', 150)],
    notes: {
      conditions: `${runs} runs each, interleaved; the built dist of every package (pnpm bench builds first)`,
      target: '<= 150 ms more than node -e 0',
    },
  };
}

async function abortLatency(): Promise<BenchResult> {
  const children = 5;
  const marker = `${8000 + (process.pid % 1000)}.${Date.now() % 1000}5`;
  const sim = await startSim({
    policy: rules([
      {
        match: { agent: 'general-purpose', toolResult: false },
        reply: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${marker}` } }],
      },
      {
        match: { when: (request) => request.agent === undefined, toolResult: false },
        reply: Array.from({ length: children }, (_, index) => ({
          type: 'tool_use' as const,
          name: 'Agent',
          input: {
            description: `sleeper ${index}`,
            prompt: `sleep ${index}`,
            subagent_type: 'general-purpose',
          },
        })),
      },
      { match: {}, reply: 'done' },
    ]),
  });
  const cwd = await mkdtemp(join(tmpdir(), 'delegate-bench-'));
  const count = (): number => {
    try {
      return execFileSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter(Boolean).length;
    } catch {
      return 0;
    }
  };
  try {
    const session = await DelegateSession.create({
      cwd,
      homeDir: cwd,
      client: createApiClient({ apiKey: 'bench', baseURL: sim.url }),
      agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
      transcriptDir: false,
      permissionMode: 'bypassPermissions',
    });
    const run = session.send('start sleepers');
    while (count() < children) await new Promise((resolve) => setTimeout(resolve, 10));
    const start = process.hrtime.bigint();
    session.abort();
    await run;
    const turnEndedMs = Number(process.hrtime.bigint() - start) / 1e6;
    while (count() > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const processesGoneMs = Number(process.hrtime.bigint() - start) / 1e6;
    return {
      name: `runtime: abort the parent of ${children} foreground children running Bash`,
      metrics: { turnEndedMs, processesGoneMs },
      conditions: `${children} foreground general-purpose children each running Bash (sleep) through the real Bash tool; from session.abort() to the turn ending and to no sleep process left`,
      targets: [checkTarget({ processesGoneMs }, 'processesGoneMs', '<=', 1000)],
      notes: { children, target: 'processes gone within 1000 ms' },
    };
  } finally {
    await sim.close();
    await rm(cwd, { recursive: true, force: true });
  }
}

export default async function bench(options: { quick?: boolean } = {}): Promise<BenchResult[]> {
  const QUICK = options.quick ?? QUICK_FROM_ENV;
  const results: BenchResult[] = [];
  for (const turns of QUICK ? [5] : [40, 200, 600]) results.push(await loopOverhead(turns));
  results.push(await sdkOnlyOverhead(QUICK ? 5 : 600));
  results.push(await requestBuilding(QUICK ? 20 : 600));
  results.push(await budgetBookkeeping(QUICK ? 10 : 1_000, QUICK ? 1_000 : 100_000));
  results.push(await spawnOverhead(QUICK ? 3 : 200));
  results.push(await manyBackgroundAgents(QUICK ? 5 : 1_000));
  results.push(await importCost(QUICK ? 1 : 9));
  results.push(await abortLatency());
  return results;
}
