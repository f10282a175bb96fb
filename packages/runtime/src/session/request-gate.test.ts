import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { rules, type Sim, startSim } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import type { Tool } from '@delegate/core';
import { z } from 'zod';
import { isMain, mainStartsBackgroundJobs } from '../__fixtures__/sim-helpers.js';
import { DelegateSession } from './session.js';

const AGENTS = 12;

let sim: Sim | undefined;
let session: DelegateSession | undefined;
let root: string | undefined;

afterEach(async () => {
  session?.abort();
  await session?.flush();
  await sim?.close();
  if (root) await rm(root, { recursive: true, force: true });
  session = undefined;
  sim = undefined;
  root = undefined;
});

// No I/O in the tool: a response's whole handling (stream, tool call, next request) can then
// run without the loop turning, which is what the gate must break up.
const noop: Tool = {
  name: 'Noop',
  inputSchema: z.object({}),
  description: () => 'Does nothing.',
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: async () => ({ content: 'ok' }),
};

/** Counts event-loop turns: one increment per check phase. */
function loopTurnCounter(): { current: () => number; stop: () => void } {
  let turns = 0;
  let handle = setImmediate(function tick() {
    turns++;
    handle = setImmediate(tick);
  });
  return { current: () => turns, stop: () => clearImmediate(handle) };
}

describe('the session request gate', () => {
  it('sends at most one request per event-loop turn when many responses land at once', async () => {
    sim = await startSim({
      policy: rules([
        { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
        mainStartsBackgroundJobs(AGENTS),
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'started them' },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Noop', input: {} }],
        },
        { match: { agent: 'general-purpose' }, reply: 'done' },
      ]),
    });
    root = await realpath(await mkdtemp(join(tmpdir(), 'delegate-gate-')));
    const counter = loopTurnCounter();
    // Responses are held until every agent's request of a round has arrived, then handed back
    // together from memory: without a gate each agent would build and send its next request in
    // the same stretch of work that read its response.
    const sentAtTurn: number[] = [];
    let held: Array<() => void> = [];
    const releaseWhenRoundIsIn = (): void => {
      if (held.length < AGENTS) return;
      const round = held;
      held = [];
      for (const release of round) release();
    };
    const client = new Anthropic({
      apiKey: 'test-key',
      baseURL: sim.url,
      maxRetries: 0,
      fetch: async (input, init) => {
        const agent = new Headers(init?.headers).get('x-delegate-agent');
        if (agent !== null) sentAtTurn.push(counter.current());
        const response = await fetch(input, init);
        if (agent === null) return response;
        const body = await response.arrayBuffer();
        await new Promise<void>((resolve) => {
          held.push(resolve);
          releaseWhenRoundIsIn();
        });
        return new Response(body, { status: response.status, headers: response.headers });
      },
    });
    const agents = getBuiltInAgents();
    session = await DelegateSession.create({
      cwd: root,
      homeDir: root,
      client,
      tools: [noop],
      agentDefinitions: { activeAgents: agents, allAgents: agents },
      transcriptDir: false,
      maxBackgroundAgents: AGENTS,
    });
    try {
      await session.send('go');
      await session.send('', { waitForBackground: true });
    } finally {
      counter.stop();
    }
    expect(session.tasks.list().filter((task) => task.status === 'completed')).toHaveLength(AGENTS);
    // Two requests per agent (the Noop call, then the report), each in a turn of its own.
    expect(sentAtTurn).toHaveLength(2 * AGENTS);
    expect(new Set(sentAtTurn).size).toBe(sentAtTurn.length);
  });
});
