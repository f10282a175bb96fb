import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { agentCall, agentOf, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('SendMessage', () => {
  it("delivers a SendMessage that arrives while the agent's last response is streaming", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => request.lastUserText,
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'slow',
              prompt: 'first task',
              subagent_type: 'general-purpose',
              name: 'slowpoke',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: [
            {
              type: 'tool_use',
              name: 'SendMessage',
              input: { to: 'slowpoke', message: 'second task' },
            },
          ],
        },
        {
          match: { when: isMain, toolResult: 'SendMessage' },
          reply: (request) => resultText(request),
        },
        {
          match: { agent: 'general-purpose', lastUserText: 'second task' },
          reply: 'did the second task',
        },
        { match: { agent: 'general-purpose' }, reply: 'did the first task' },
      ]),
      // The agent's first answer is slow, and the parent's SendMessage comes while it streams.
      sim: {
        faults: [
          { kind: 'slow_first_byte', delayMs: 600, times: 1, match: { agent: 'general-purpose' } },
          {
            kind: 'slow_first_byte',
            delayMs: 150,
            times: 1,
            match: { when: isMain, toolResult: 'Agent' },
          },
        ],
      },
    });
    const first = await current.session.send('go');
    expect(first.text).toContain('it will read your message at its next turn');
    const { text } = await current.session.send('', { waitForBackground: true });
    expect(text).toContain('did the second task');
    const agentRequests = current.sim.journal.filter(
      (entry) => entry.headers['x-delegate-agent'] === 'general-purpose' && entry.status === 200,
    );
    expect(agentRequests).toHaveLength(2);
  });

  it('continues a finished agent with SendMessage, keeping its context', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `follow-up: ${request.lastUserText}`,
        },
        {
          match: { when: isMain, lastUserText: 'start', toolResult: false },
          reply: [
            agentCall({
              description: 'remember',
              prompt: 'Remember the word kiwi',
              subagent_type: 'general-purpose',
              name: 'keeper',
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'ask again', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'SendMessage',
              input: { to: 'keeper', message: 'What was the word?' },
            },
          ],
        },
        {
          match: { agent: 'general-purpose', lastUserText: 'What was the word?' },
          reply: (request) =>
            `The word was ${/Remember the word (\w+)/.exec(JSON.stringify(request.messages))?.[1] ?? 'lost'}.`,
        },
        { match: { agent: 'general-purpose' }, reply: 'Remembered.' },
        { match: { when: isMain, toolResult: true }, reply: (request) => resultText(request) },
      ]),
    });
    const { session } = current;
    await session.send('start');
    const resumed = await session.send('ask again', { waitForBackground: true });
    expect(resumed.text).toContain('The word was kiwi.');
  });

  it('refuses to continue a one-shot Explore agent with SendMessage', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: 'first' },
          reply: [
            agentCall({
              description: 'look',
              prompt: 'look',
              subagent_type: 'Explore',
              name: 'scout',
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'again', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'SendMessage', input: { to: 'scout', message: 'and more?' } },
          ],
        },
        { match: { when: isMain, toolResult: true }, reply: (request) => resultText(request) },
        { match: { agent: 'Explore' }, reply: 'found it' },
      ]),
    });
    await current.session.send('first');
    const { text } = await current.session.send('again');
    expect(text).toMatch(/one-shot Explore agent: it gave its report and cannot be continued/);
    expect(current.sim.journal.filter((entry) => agentOf(entry) === 'Explore')).toHaveLength(1);
  });

  it('refuses a SendMessage of only whitespace, and the agent still takes a real one after it', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: 'first' },
          reply: [agentCall({ description: 'count', prompt: 'count', name: 'counter' })],
        },
        {
          match: { when: isMain, lastUserText: 'blank', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'SendMessage', input: { to: 'counter', message: ' \n ' } },
          ],
        },
        {
          match: { when: isMain, lastUserText: 'real', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'SendMessage',
              input: { to: 'counter', message: 'What is 2+2?' },
            },
          ],
        },
        { match: { when: isMain, toolResult: true }, reply: (request) => resultText(request) },
        { match: { when: isMain }, reply: 'noted' },
        {
          match: { when: (request) => !isMain(request) },
          reply: (request) => `heard: ${request.lastUserText}`,
        },
      ]),
    });
    await current.session.send('first');
    const blank = await current.session.send('blank');
    expect(blank.text).toMatch(/message is empty or only whitespace/);
    await current.session.send('real', { waitForBackground: true });
    const heard = current.sim.journal
      .filter((entry) => agentOf(entry) !== undefined)
      .map((entry) => JSON.stringify(entry.body));
    expect(heard.some((body) => body.includes('What is 2+2?'))).toBe(true);
    // The blank message never reached the agent's conversation, and every request it made went through.
    for (const entry of current.sim.journal.filter((item) => agentOf(item) !== undefined)) {
      expect(JSON.stringify(entry.body)).not.toContain(JSON.stringify(' \n '));
      expect(entry.status).toBe(200);
    }
  });
});
