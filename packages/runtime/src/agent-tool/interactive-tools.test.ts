import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rules, type SimRequest } from '@delegate/api-sim';
import type { Tool } from '@delegate/core';
import { agentCall, agentOf, isMain, requestBody } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';
import { getBuiltinTools } from '@delegate/tools';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** A host's question tool: it needs a person, and counts the questions it was asked. */
function questionTool(): Tool & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    name: 'AskUserQuestion',
    description: () => 'Asks the person a question.',
    inputSchema: z.object({ question: z.string() }),
    call: async (input: { question: string }) => {
      asked.push(input.question);
      return { content: 'the person said yes' };
    },
    isReadOnly: () => true,
    isConcurrencySafe: () => false,
    requiresUserInteraction: () => true,
  };
}

const ask = { type: 'tool_use' as const, name: 'AskUserQuestion', input: { question: 'deploy?' } };
const fromFork = (request: SimRequest) => request.agent === 'fork';

/** The text of the tool results the fork got back, from its requests to the simulator. */
function forkToolResults(test: TestSession): string {
  return test.sim.journal
    .filter((entry) => agentOf(entry) === 'fork')
    .map((entry) => JSON.stringify(requestBody(entry).messages.at(-1)))
    .join('\n');
}

describe('interactive tools and background agents', () => {
  it('a fork that runs in the background cannot ask the person a question', async () => {
    const tool = questionTool();
    let forkTurns = 0;
    current = await createTestSession({
      session: { forkEnabled: true, tools: [...getBuiltinTools(), tool] },
      policy: rules([
        {
          match: { when: (request) => isMain(request) && request.turnIndex === 0 },
          reply: [agentCall({ description: 'job', prompt: 'job', run_in_background: true })],
        },
        { match: { when: isMain }, reply: 'started' },
        { match: { when: (request) => fromFork(request) && forkTurns++ === 0 }, reply: [ask] },
        { match: { when: fromFork }, reply: 'fork done' },
      ]),
    });
    await current.session.send('go', { waitForBackground: true });
    expect(forkTurns).toBe(2);
    expect(tool.asked).toEqual([]);
    expect(forkToolResults(current)).toMatch(/AskUserQuestion needs a person to answer/);
  });

  it('a foreground fork moved to the background stops asking from then on', async () => {
    const tool = questionTool();
    let forkId: string | undefined;
    let forkTurns = 0;
    const live: { session?: TestSession['session'] } = {};
    current = await createTestSession({
      session: { forkEnabled: true, tools: [...getBuiltinTools(), tool] },
      policy: rules([
        {
          match: { when: (request) => isMain(request) && request.turnIndex === 0 },
          reply: [agentCall({ description: 'job', prompt: 'job' })],
        },
        { match: { when: isMain }, reply: 'started' },
        // In the foreground the fork may ask (a person is there to answer).
        {
          match: { when: (request) => fromFork(request) && forkTurns === 0 },
          reply: () => {
            forkTurns++;
            return [ask];
          },
        },
        {
          match: { when: (request) => fromFork(request) && forkTurns === 1 },
          reply: async () => {
            forkTurns++;
            forkId = live.session!.tasks.list().find((task) => task.agentId)?.agentId;
            live.session!.backgroundAgent(forkId!);
            await waitUntil(() => live.session!.tasks.runningBackgroundCount === 1);
            return [ask];
          },
        },
        { match: { when: fromFork }, reply: 'fork done' },
      ]),
    });
    live.session = current.session;
    await current.session.send('go', { waitForBackground: true });
    expect(forkId).toBeDefined();
    expect(tool.asked).toEqual(['deploy?']);
    expect(forkToolResults(current)).toMatch(/AskUserQuestion needs a person to answer/);
  });

  it('a fork resumed from its transcript (which runs in the background) cannot ask either', async () => {
    const tool = questionTool();
    let asks = 0;
    current = await createTestSession({
      session: { forkEnabled: true, tools: [...getBuiltinTools(), tool] },
      policy: rules([
        {
          match: { when: (request) => isMain(request) && request.turnIndex === 0 },
          reply: [agentCall({ description: 'job', prompt: 'job' })],
        },
        { match: { when: isMain }, reply: 'noted' },
        {
          match: { when: (request) => fromFork(request) && request.lastUserText === 'again' },
          reply: () => {
            asks++;
            return [ask];
          },
        },
        { match: { when: fromFork }, reply: 'fork done' },
      ]),
    });
    const { session } = current;
    const agentIds: string[] = [];
    session.events.on((event) => {
      if (event.type === 'agent.started') agentIds.push(event.agentId);
    });
    await session.send('go');
    await session.flush();
    expect(agentIds).toHaveLength(1);
    await session.resumeAgent({ agentId: agentIds[0]!, message: 'again' });
    await session.send('', { waitForBackground: true });
    expect(asks).toBe(1);
    expect(tool.asked).toEqual([]);
    expect(forkToolResults(current)).toMatch(/AskUserQuestion needs a person to answer/);
  });
});
