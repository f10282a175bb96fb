import type Anthropic from '@anthropic-ai/sdk';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rules, startSim } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { createRootToolUseContext } from '@delegate/context-isolation';
import { type Tool, createUserMessage } from '@delegate/core';
import { DelegateSession, createApiClient, createCanUseTool, query } from '@delegate/runtime';
import { z } from 'zod';
import type { BenchResult } from './harness.js';

const TURNS = 200;

const noop: Tool = {
  name: 'Noop',
  inputSchema: z.object({ n: z.number() }),
  description: () => 'Does nothing.',
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: async (input: { n: number }) => ({ content: `ok ${input.n}` }),
};

async function loopOverhead(): Promise<BenchResult> {
  const sim = await startSim({
    policy: rules([
      { match: { when: (request) => request.turnIndex >= TURNS }, reply: 'finished' },
      {
        match: {},
        reply: (request) => [{ type: 'tool_use', name: 'Noop', input: { n: request.turnIndex } }],
      },
    ]),
  });
  const cwd = await mkdtemp(join(tmpdir(), 'delegate-bench-'));
  try {
    const client = createApiClient({ apiKey: 'bench', baseURL: sim.url });
    const context = createRootToolUseContext({ cwd, tools: [noop], model: 'claude-sonnet-5-5' });
    const start = process.hrtime.bigint();
    for await (const _event of query({
      client,
      messages: [createUserMessage({ content: 'loop' })],
      systemPrompt: ['You loop.'],
      toolUseContext: context,
      canUseTool: createCanUseTool(),
      querySource: 'bench',
    })) {
      // drain
    }
    const loopMs = Number(process.hrtime.bigint() - start) / 1e6;
    // The same requests sent straight through the SDK, side by side: what the loop adds.
    const bodies = sim.journal.entries.map(
      (entry) => entry.body as Anthropic.MessageCreateParamsStreaming,
    );
    const rawStart = process.hrtime.bigint();
    for (const body of bodies) {
      const stream = await client.messages.create({ ...body, stream: true });
      for await (const _event of stream) {
        // drain
      }
    }
    const rawMs = Number(process.hrtime.bigint() - rawStart) / 1e6;
    return {
      name: `runtime: query loop, ${TURNS} tool turns, zero model latency`,
      metrics: {
        loopMsPerTurn: loopMs / bodies.length,
        rawSdkMsPerTurn: rawMs / bodies.length,
        overheadMsPerTurn: (loopMs - rawMs) / bodies.length,
        loopOverRawRatio: loopMs / rawMs,
      },
      notes: { requests: bodies.length },
    };
  } finally {
    await sim.close();
    await rm(cwd, { recursive: true, force: true });
  }
}

async function forkCacheSavings(): Promise<BenchResult> {
  const prompts = ['Audit module A', 'Audit module B', 'Audit module C', 'Audit module D'];
  const measure = async (forkEnabled: boolean) => {
    const sim = await startSim({
      policy: rules([
        { match: { forkDirective: true }, reply: 'Scope: audit\nResult: fine.' },
        { match: { agent: 'general-purpose' }, reply: 'fine.' },
        {
          match: { when: (request) => request.agent === undefined, toolResult: false },
          reply: prompts.map((prompt) => ({
            type: 'tool_use' as const,
            name: 'Agent',
            input: forkEnabled
              ? { description: prompt, prompt }
              : { description: prompt, prompt, subagent_type: 'general-purpose' },
          })),
        },
        { match: {}, reply: 'done' },
      ]),
    });
    const cwd = await mkdtemp(join(tmpdir(), 'delegate-bench-'));
    try {
      const session = await DelegateSession.create({
        cwd,
        client: createApiClient({ apiKey: 'bench', baseURL: sim.url }),
        agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
        transcriptDir: false,
        forkEnabled,
        // Give both runs a long shared history, as a real parent would have.
        userContext: { projectInstructions: 'Project notes. '.repeat(2000) },
      });
      await session.send('Audit all modules');
      const children = sim.journal.filter(
        (entry) => entry.headers['x-delegate-agent'] !== undefined,
      );
      let read = 0;
      let all = 0;
      for (const entry of children) {
        const usage = entry.usage!;
        read += usage.cache_read_input_tokens;
        all +=
          usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
      }
      return { read, all, uncached: all - read };
    } finally {
      await sim.close();
      await rm(cwd, { recursive: true, force: true });
    }
  };
  const forks = await measure(true);
  const fresh = await measure(false);
  return {
    name: `runtime: ${prompts.length} children as forks vs. as fresh general-purpose agents`,
    metrics: {
      forkCacheHitRate: forks.read / forks.all,
      freshCacheHitRate: fresh.read / fresh.all,
      forkUncachedInputTokens: forks.uncached,
      freshUncachedInputTokens: fresh.uncached,
    },
    notes: {
      children: prompts.length,
      note: 'forks inherit the parent context, so their total input is larger but mostly cached',
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
      notes: { children, target: 'processes gone within 1000 ms' },
    };
  } finally {
    await sim.close();
    await rm(cwd, { recursive: true, force: true });
  }
}

export default async function bench(): Promise<BenchResult[]> {
  return [await loopOverhead(), await forkCacheSavings(), await abortLatency()];
}
