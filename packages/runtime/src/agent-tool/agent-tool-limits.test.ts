import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import type { AgentEvent } from '@delegate/core';
import { readTranscript } from '../transcripts/read-transcript.js';
import { getBuiltInAgents } from '@delegate/agent-defs';
import {
  customAgent,
  isMain,
  requestBody,
  resultText,
  agentCall,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('Agent tool limits and permissions', () => {
  it('refuses a background agent beyond maxBackgroundAgents', async () => {
    const marker = `${7000 + (process.pid % 1000)}.${Date.now() % 1000}9`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [1, 2, 3].map((index) =>
            agentCall({
              description: `job ${index}`,
              prompt: `job ${index}`,
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ),
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${marker}` } }],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { maxBackgroundAgents: 2, permissionMode: 'bypassPermissions' },
    });
    const { text } = await current.session.send('start three');
    expect(text.match(/Started general-purpose agent/g)).toHaveLength(2);
    expect(text).toContain('2 background agents are already running, the most allowed at once');
  });

  it('refuses to nest deeper than maxDepth', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'x', subagent_type: 'general-purpose' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { maxDepth: 0 },
    });
    const { text } = await current.session.send('spawn');
    expect(text).toContain('Sub-agents may nest 0 levels deep');
  });

  it("forwards a fork's permission question to the parent (bubble) and lets the person answer", async () => {
    const asked: string[] = [];
    current = await createTestSession({
      policy: rules([
        {
          match: { agent: 'fork', forkDirective: true },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'touch fork.txt && echo from-the-fork' },
            },
          ],
        },
        {
          match: { agent: 'fork', toolResult: 'Bash' },
          reply: (request) => `Scope: echo\nResult: ${resultText(request)}`,
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'echo', prompt: 'echo something' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: {
        forkEnabled: true,
        permissionMode: 'default',
        ask: async ({ tool, input }) => {
          asked.push(`${tool.name}: ${(input as { command: string }).command}`);
          return { behavior: 'allow' };
        },
      },
    });
    const { text } = await current.session.send('fork an echo');
    expect(asked).toEqual(['Bash: touch fork.txt && echo from-the-fork']);
    expect(text).toContain('from-the-fork');
  });

  it('never lets a background agent ask: its questions become denials', async () => {
    const asked: string[] = [];
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
              description: 'bg',
              prompt: 'run it',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Bash', input: { command: 'touch bg.txt; echo nope' } },
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: 'Bash' },
          reply: (request) => `bash said: ${resultText(request)}`,
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'started' },
      ]),
      session: {
        permissionMode: 'default',
        ask: async ({ tool }) => {
          asked.push(tool.name);
          return { behavior: 'allow' };
        },
      },
    });
    const { text } = await current.session.send('background bash', { waitForBackground: true });
    expect(asked).toEqual([]);
    expect(text).toContain('Permission denied');
  });

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
    expect(seen).toEqual(['agent.started', 'agent.progress', 'agent.completed']);
    // general-purpose is not one-shot: the result names the agent and its usage.
    expect(text).toMatch(/^hi\n\nagentId: a[0-9a-f]+ \(use SendMessage/);
    expect(text).toContain('<usage>total_tokens:');
  });

  it('writes the session transcript as JSONL and reads it back past a torn last line', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'answer' }) });
    await current.session.send('question');
    await current.session.flush();
    const path = current.session.transcript!.sessionPath();
    await appendFile(path, '{"type":"user","uuid":"torn');
    const entries = await readTranscript(path);
    expect(entries.map((entry) => entry.type)).toEqual(['user', 'user', 'assistant']);
    expect(entries[2]!.parentUuid).toBe(entries[1]!.uuid);
    expect((await readFile(path, 'utf8')).split('\n').length).toBe(4);
    expect(join(current.transcriptDir, `${current.session.transcript!.sessionId}.jsonl`)).toBe(
      path,
    );
  });
});

describe('the agent list', () => {
  const definitionsWith = (extra: string[]) => {
    const agents = [
      ...getBuiltInAgents(),
      ...extra.map((name) =>
        customAgent(
          `---\nname: ${name}\ndescription: Does ${name} work\n---\nYou do ${name} work.`,
        ),
      ),
    ];
    return { activeAgents: agents, allAgents: agents };
  };

  it('goes into a <system-reminder> by default, so a new agent leaves the tools block unchanged', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const { session, sim } = current;
    await session.send('first');
    session.context.options.agentDefinitions = definitionsWith(['translator']);
    session.runtime.getAgentDefinitions = () => session.context.options.agentDefinitions!;
    await session.send('second');
    const [first, second] = sim.journal.entries;
    const agentTool = (entry: typeof first) =>
      (requestBody(entry!).tools as unknown as Array<{ name: string; description: string }>).find(
        (tool) => tool.name === 'Agent',
      )!;
    expect(agentTool(first).description).not.toContain('general-purpose:');
    expect(agentTool(first).description).toBe(agentTool(second).description);
    expect(first!.fingerprint!.tools).toBe(second!.fingerprint!.tools);
    expect(JSON.stringify(requestBody(first!).messages[0])).toContain('- general-purpose:');
    expect(JSON.stringify(requestBody(second!).messages.at(-1))).toContain(
      '- translator: Does translator work',
    );
  });

  it('is part of the tool description when agentListInMessages is off', async () => {
    current = await createTestSession({
      policy: rules([], { fallback: 'ok' }),
      session: { agentListInMessages: false },
    });
    await current.session.send('hi');
    const tools = requestBody(current.sim.journal.entries[0]!).tools as unknown as Array<{
      name: string;
      description: string;
    }>;
    expect(tools.find((tool) => tool.name === 'Agent')!.description).toContain('- Explore:');
    expect(JSON.stringify(requestBody(current.sim.journal.entries[0]!).messages)).not.toContain(
      '<system-reminder>',
    );
  });
});

describe('TaskOutput and TaskStop on background shells', () => {
  it("reads a background Bash command's output once it ends, and stops a running one", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: 'start shells', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'sleep 0.2; echo shell-finished', run_in_background: true },
            },
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'sleep 30', run_in_background: true },
            },
          ],
        },
        {
          match: { when: isMain, toolResult: 'Bash' },
          reply: (request) => {
            const ids = [
              ...new Set(
                [...resultText(request).matchAll(/\b(t[0-9a-f]{12})\b/g)].map((match) => match[1]!),
              ),
            ];
            return [
              {
                type: 'tool_use',
                name: 'TaskOutput',
                input: { task_id: ids[0]!, timeout: 10_000 },
              },
              { type: 'tool_use', name: 'TaskStop', input: { task_id: ids[1]! } },
            ];
          },
        },
        {
          match: { when: isMain, toolResult: 'TaskOutput' },
          reply: (request) => resultText(request),
        },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    const { text } = await current.session.send('start shells');
    expect(text).toContain('shell-finished');
    expect(text).toMatch(/status: completed[\s\S]*status: killed/);
  });
});

describe('effort', () => {
  it("turns a numeric effort in the definition into the agent's thinking budget", async () => {
    const thinker = customAgent(
      '---\nname: thinker\ndescription: Thinks hard\neffort: 4096\n---\nYou think.',
    );
    current = await createTestSession({
      agents: [thinker],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'think', subagent_type: 'thinker' })],
        },
        { match: { agent: 'thinker' }, reply: 'thought' },
        { match: { when: isMain }, reply: 'done' },
      ]),
    });
    await current.session.send('go');
    const request = current.sim.journal.filter(
      (entry) => entry.headers['x-delegate-agent'] === 'thinker',
    )[0]!;
    expect((request.body as { thinking?: unknown }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 4096,
    });
  });
});
