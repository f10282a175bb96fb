import { afterEach, describe, expect, it, vi } from 'vitest';
import { rules } from '@delegate/api-sim';
import type { AgentEvent } from '@delegate/core';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { secretRedactor } from '../util/redact-secrets.js';
import { EventBus } from './event-bus.js';

const started: AgentEvent = {
  type: 'agent.started',
  agentId: 'a1',
  timestamp: new Date(0).toISOString(),
  agentType: 'Explore',
  description: 'look',
  mode: 'foreground',
  model: 'm',
};

let current: TestSession | undefined;

afterEach(async () => {
  vi.restoreAllMocks();
  await current?.cleanup().catch(() => undefined);
  current = undefined;
});

describe('EventBus', () => {
  it('delivers to every listener even when one throws, and hands the error to the hook', () => {
    const errors: unknown[] = [];
    const bus = new EventBus({ onListenerError: (error) => errors.push(error) });
    const seen: string[] = [];
    bus.on(() => {
      throw new Error('broken listener');
    });
    bus.on((event) => seen.push(event.type));
    bus.emit(started);
    expect(seen).toEqual(['agent.started']);
    expect(errors.map((error) => (error as Error).message)).toEqual(['broken listener']);
  });

  it('rethrows to the emitter when the hook rethrows', () => {
    const bus = new EventBus({
      onListenerError: (error) => {
        throw error;
      },
    });
    bus.on(() => expect(1).toBe(2));
    expect(() => bus.emit(started)).toThrow(/expected 1 to be 2/);
  });

  it('warns by default instead of swallowing a listener error', () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const bus = new EventBus();
    bus.on(() => {
      throw new Error('quiet failure');
    });
    bus.emit(started);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('quiet failure'), {
      code: 'DELEGATE_EVENT_LISTENER',
    });
  });

  it('streams events as an async iterable that ends on abort', async () => {
    const bus = new EventBus();
    const controller = new AbortController();
    const received: string[] = [];
    const reading = (async () => {
      for await (const event of bus.subscribe({ signal: controller.signal }))
        received.push(event.agentId);
    })();
    bus.emit(started);
    bus.emit({ ...started, agentId: 'a2' });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await reading;
    expect(received).toEqual(['a1', 'a2']);
  });

  it('redacts every string of every event before listeners, subscribers and the history see it', async () => {
    const secret = 'sk-ant-bus-secret-0042';
    const bus = new EventBus({ redact: secretRedactor([secret])! });
    const message: AgentEvent = {
      type: 'agent.message',
      agentId: 'a1',
      timestamp: started.timestamp,
      message: {
        type: 'assistant',
        uuid: 'u1',
        timestamp: started.timestamp,
        message: {
          role: 'assistant',
          content: [
            { type: 'text', text: `Deployed with ${secret}` },
            { type: 'tool_use', id: 't1', name: 'Bash', input: { command: `echo ${secret}` } },
          ],
        },
      },
    } as AgentEvent;
    const emitted = [
      { ...started, description: `deploy with ${secret}` },
      message,
      {
        type: 'agent.tool_use',
        agentId: 'a1',
        timestamp: started.timestamp,
        toolName: 'Bash',
        toolUseId: 't1',
        input: { nested: [{ command: secret }] },
      },
      {
        type: 'agent.progress',
        agentId: 'a1',
        timestamp: started.timestamp,
        messageCount: 1,
        toolUseCount: 1,
        tokens: 5,
        lastActivity: `Bash ${secret}`,
      },
    ] as AgentEvent[];
    const before = JSON.stringify(emitted);
    const heard: AgentEvent[] = [];
    bus.on((event) => heard.push(event));
    const controller = new AbortController();
    const streamed: AgentEvent[] = [];
    const reading = (async () => {
      for await (const event of bus.subscribe({ signal: controller.signal })) streamed.push(event);
    })();
    for (const event of emitted) bus.emit(event);
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await reading;
    for (const seen of [heard, streamed, bus.events]) {
      expect(seen).toHaveLength(4);
      expect(JSON.stringify(seen)).not.toContain(secret);
    }
    expect(heard[1]).toMatchObject({
      message: {
        message: {
          content: [
            { text: 'Deployed with [REDACTED]' },
            { input: { command: 'echo [REDACTED]' } },
          ],
        },
      },
    });
    // What was emitted (the agent's own conversation holds that message) is unchanged.
    expect(JSON.stringify(emitted)).toBe(before);
  });

  it('delivers an event with no secret in it as it was emitted, without copying it', () => {
    const bus = new EventBus({ redact: secretRedactor(['sk-ant-bus-secret-0042'])! });
    const heard: AgentEvent[] = [];
    bus.on((event) => heard.push(event));
    bus.emit(started);
    expect(heard[0]).toBe(started);
    expect(bus.events[0]).toBe(started);
  });
});

describe('an assertion inside a session listener', () => {
  it('fails the test that placed it, instead of being swallowed', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'look', prompt: 'look', subagent_type: 'Explore' })],
        },
        { match: { agent: 'Explore' }, reply: 'found it' },
        { match: { when: isMain }, reply: 'done' },
      ]),
    });
    current.session.events.on((event) => {
      if (event.type === 'agent.completed') expect(event.result).toBe('something else');
    });
    await current.session.send('go').catch(() => undefined);
    expect(current.listenerErrors).toHaveLength(1);
    await expect(current.cleanup()).rejects.toThrow(/expected 'found it' to be 'something else'/);
    current = undefined;
  });
});

describe('session events', () => {
  it('streams lifecycle events as an async iterable', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'hello', prompt: 'say hi', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'hi' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
    });
    const controller = new AbortController();
    const seen: AgentEvent['type'][] = [];
    const reading = (async () => {
      for await (const event of current!.session.events.subscribe({ signal: controller.signal })) {
        if (event.type !== 'agent.tool_use') seen.push(event.type);
        if (event.type === 'agent.completed') break;
      }
    })();
    const { text } = await current.session.send('say hi through an agent');
    await reading;
    // The main agent's response that called Agent, then the sub-agent's own response.
    expect(seen).toEqual([
      'agent.cost',
      'agent.started',
      'agent.cost',
      'agent.message',
      'agent.progress',
      'agent.completed',
    ]);
    // general-purpose is not one-shot: the result names the agent and its usage.
    expect(text).toMatch(/^hi\n\nagentId: a[0-9a-f]+ \(use SendMessage/);
    expect(text).toContain('<usage>total_tokens:');
  });
});
