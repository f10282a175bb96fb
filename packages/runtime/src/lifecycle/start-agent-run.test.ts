import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { type AgentEvent } from '@delegate/core';
import { agentCall, agentOf, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('foreground and background runs', () => {
  it('moves a running foreground agent to the background and notifies the parent when it ends', async () => {
    // The agent's Bash call waits for a file the test writes once the agent is in the
    // background: it cannot finish early, however slow the machine.
    const gate = 'release-the-agent';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `done in background: ${request.lastUserText}`,
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'slow job',
              prompt: 'slow job',
              subagent_type: 'general-purpose',
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: `while [ ! -e ${gate} ]; do sleep 0.05; done; echo slept` },
            },
          ],
        },
        { match: { agent: 'general-purpose', toolResult: 'Bash' }, reply: 'slow job finished' },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `moved: ${resultText(request)}`,
        },
      ]),
      session: { permissionMode: 'bypassPermissions', backgroundHintMs: 50 },
    });
    const { session, sim, cwd } = current;
    const events: AgentEvent[] = [];
    const moved: boolean[] = [];
    session.events.on((event) => {
      events.push(event);
      // An action, not an assertion: its outcome is checked after the turn.
      if (event.type === 'agent.background_hint')
        moved.push(session.backgroundAgent(event.agentId));
    });
    const first = await session.send('run the slow job');
    expect(moved).toEqual([true]);
    expect(first.text).toContain('moved: Started general-purpose agent');
    const types = events.map((event) => event.type);
    expect(types).toContain('agent.background_hint');
    expect(types).toContain('agent.backgrounded');
    await writeFile(join(cwd, gate), '');
    const finished = await session.send('', { waitForBackground: true });
    expect(finished.text).toContain('slow job finished');
    // It kept running rather than restarting: one request per turn of its script.
    expect(sim.journal.filter((entry) => agentOf(entry) === 'general-purpose')).toHaveLength(2);
    expect(session.backgroundAgent(events[0]!.agentId)).toBe(false);
  });
});

describe('lifetimes', () => {
  it("stops every child and its shell when the parent aborts, but one child's stop leaves the parent running", async () => {
    const marker = `${4000 + (process.pid % 1000)}.${Date.now() % 1000}3`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: Array.from({ length: 5 }, (_, index) =>
            agentCall({
              description: `sleeper ${index}`,
              prompt: `sleep ${index}`,
              subagent_type: 'general-purpose',
            }),
          ),
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${marker}` } }],
        },
        { match: { agent: 'general-purpose' }, reply: 'woke up' },
        { match: { when: isMain }, reply: 'main finished' },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
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
    const run = current.session.send('Start five sleepers');
    expect(await waitUntil(() => count() === 5)).toBe(true);
    current.session.abort();
    await run;
    expect(await waitUntil(() => count() === 0, 5_000)).toBe(true);
    expect(current.session.tasks.list().filter((task) => task.status === 'killed')).toHaveLength(5);
  });

  it('keeps the parent running when one child is stopped', async () => {
    const marker = `${5000 + (process.pid % 1000)}.${Date.now() % 1000}7`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: 'the sleeper was stopped, carrying on',
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'sleeper',
              prompt: 'sleep',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${marker}` } }],
        },
        { match: { agent: 'general-purpose' }, reply: 'woke up' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'started it' },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    await current.session.send('start one');
    const [task] = current.session.tasks.list();
    expect(
      await waitUntil(() => current!.session.tasks.get(task!.id)?.lastActivity === 'called Bash'),
    ).toBe(true);
    current.session.stopTask(task!.id);
    const { text } = await current.session.send('', { waitForBackground: true });
    expect(text).toBe('the sleeper was stopped, carrying on');
    expect(current.session.context.abortController.signal.aborted).toBe(false);
    expect(current.session.tasks.get(task!.id)?.status).toBe('killed');
  });
});

describe('lifecycle events for renderers', () => {
  it('names the Agent call in agent.started and sends each sub-agent message as agent.message', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'review',
              prompt: 'Review',
              subagent_type: 'general-purpose',
            }),
          ],
        },
        { match: { when: isMain }, reply: (request) => `Reviewer: ${resultText(request)}` },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }],
        },
        { match: { agent: 'general-purpose' }, reply: 'Looks good.' },
      ]),
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('review it');
    const started = events.find((event) => event.type === 'agent.started');
    const call = current.session.messages
      .flatMap((message) => (message.type === 'assistant' ? message.message.content : []))
      .find((block) => block.type === 'tool_use');
    expect(started).toMatchObject({ agentType: 'general-purpose', toolUseId: call?.id });
    const messages = events.flatMap((event) => (event.type === 'agent.message' ? [event] : []));
    // The sub-agent's two responses and the Glob result between them, in order.
    expect(messages.map((event) => event.message.type)).toEqual(['assistant', 'user', 'assistant']);
    expect(messages.every((event) => event.agentId === started?.agentId)).toBe(true);
  });
});
