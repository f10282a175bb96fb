import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltinTools } from '@delegate/tools';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { watchTool } from '../__fixtures__/watch-tool.js';
import type { AgentToolProgress } from '../agent-tool/agent-tool-output.js';
import type { QueryEvent } from '../query/query.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

async function shellPid(file: string): Promise<number> {
  return existsSync(file) ? Number((await readFile(file, 'utf8')).trim()) : 0;
}

function isWatchProgress(message: QueryEvent): boolean {
  return message.type === 'progress' && (message.data as { watching?: boolean }).watching === true;
}

function agentProgress(messages: readonly QueryEvent[]): AgentToolProgress[] {
  return messages.flatMap((message) =>
    message.type === 'progress' &&
    (message.data as { type?: string } | undefined)?.type === 'agent_progress'
      ? [message.data as AgentToolProgress]
      : [],
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A main agent that, in one message, hands a shell job to a foreground general-purpose
 * agent running `command` and calls Watch, whose progress lets a run() loop stop mid-call.
 */
function delegatesShellWork(command: string) {
  return rules([
    { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
    {
      match: { when: isMain, toolResult: false },
      reply: [
        agentCall({
          description: 'shell job',
          prompt: 'shell job',
          subagent_type: 'general-purpose',
        }),
        { type: 'tool_use', name: 'Watch', input: {} },
      ],
    },
    {
      match: { agent: 'general-purpose', toolResult: false },
      reply: [{ type: 'tool_use', name: 'Bash', input: { command } }],
    },
    { match: { agent: 'general-purpose', toolResult: 'Bash' }, reply: 'shell job finished' },
    { match: { when: isMain }, reply: (request) => `main saw: ${resultText(request)}` },
  ]);
}

describe('a run() loop that stops while tool calls run', () => {
  it('stops the foreground agent it was waiting for and its shell, and the session goes on', async () => {
    current = await createTestSession({
      policy: delegatesShellWork('echo $$ > shell.pid; exec sleep 30'),
      session: { permissionMode: 'bypassPermissions', tools: [...getBuiltinTools(), watchTool()] },
    });
    const { session, cwd } = current;
    const pidFile = join(cwd, 'shell.pid');
    for await (const event of session.run('run the shell job')) {
      // Watch's progress: the loop is in the middle of both calls.
      if (!isWatchProgress(event)) continue;
      // The file exists before `echo` writes to it: wait for the number.
      expect(await waitUntil(async () => (await shellPid(pidFile)) > 0)).toBe(true);
      break;
    }
    const pid = await shellPid(pidFile);
    // The break returned once the work it stopped had ended: nothing is left running.
    expect(alive(pid)).toBe(false);
    expect(session.tasks.list().filter((task) => task.status === 'running')).toEqual([]);
    expect(session.foregroundAgents()).toEqual([]);
    // Only that turn stopped: the session answers the next prompt.
    const next = await session.send('and now?');
    expect(next.outcome.reason).toBe('completed');
  });

  it('leaves a foreground agent it had moved to the background running', async () => {
    const gate = 'release-the-agent';
    current = await createTestSession({
      policy: delegatesShellWork(`while [ ! -e ${gate} ]; do sleep 0.05; done; echo done`),
      session: { permissionMode: 'bypassPermissions', tools: [...getBuiltinTools(), watchTool()] },
    });
    const { session, cwd } = current;
    for await (const event of session.run('run the shell job')) {
      if (!isWatchProgress(event)) continue;
      expect(await waitUntil(() => session.foregroundAgents().length === 1)).toBe(true);
      expect(session.backgroundAgent(session.foregroundAgents()[0]!)).toBe(true);
      // Its Agent call has returned (async_launched) before the loop stops.
      expect(await waitUntil(() => session.foregroundAgents().length === 0)).toBe(true);
      break;
    }
    const running = session.tasks.list().filter((task) => task.status === 'running');
    expect(running.map((task) => task.type)).toEqual(['local_agent']);
    await writeFile(join(cwd, gate), '');
    const finished = await session.send('', { waitForBackground: true });
    expect(finished.outcome.reason).toBe('completed');
    expect(session.tasks.get(running[0]!.id)?.status).toBe('completed');
  });

  it("stops on a foreground agent's own progress: each of its responses reaches the loop while its Agent call runs", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'look', prompt: 'look', subagent_type: 'general-purpose' }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo one' } }],
        },
        {
          match: { agent: 'general-purpose', toolResult: 'Bash' },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'exec sleep 30' } }],
        },
        { match: { when: isMain }, reply: 'done' },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    const { session } = current;
    const seen: QueryEvent[] = [];
    for await (const event of session.run('look around')) {
      seen.push(event);
      // The second response starts the long command: stop there.
      if (agentProgress(seen).length === 2) break;
    }
    const [first, second] = agentProgress(seen);
    const agentId = session.tasks.list().find((task) => task.type === 'local_agent')?.agentId;
    expect(first).toMatchObject({
      type: 'agent_progress',
      agentId,
      agentType: 'general-purpose',
      toolUseCount: 1,
      lastActivity: 'called Bash',
    });
    expect(first!.tokens).toBeGreaterThan(0);
    expect(second).toMatchObject({ agentId, toolUseCount: 2 });
    expect(second!.messageCount).toBeGreaterThan(first!.messageCount);
    // No tool result was added in between: the Agent call was still running.
    expect(seen.filter((message) => message.type === 'user')).toEqual([]);
    // The break stopped it and its shell.
    expect(session.foregroundAgents()).toEqual([]);
    expect(session.tasks.list().filter((task) => task.status === 'running')).toEqual([]);
  });

  it('reports no more progress of a foreground agent once it is moved to the background', async () => {
    current = await createTestSession({
      policy: rules([
        { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'long', prompt: 'long', subagent_type: 'general-purpose' }),
            { type: 'tool_use', name: 'Watch', input: {} },
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo one' } }],
        },
        {
          match: { agent: 'general-purpose', toolResult: 'Bash' },
          // After `echo one`, `echo two`; after both, the answer.
          reply: (request) =>
            JSON.stringify(request.messages).includes('echo two')
              ? 'long done'
              : [{ type: 'tool_use', name: 'Bash', input: { command: 'echo two' } }],
        },
        { match: { when: isMain }, reply: 'main done' },
      ]),
      session: { permissionMode: 'bypassPermissions', tools: [...getBuiltinTools(), watchTool()] },
    });
    const { session } = current;
    const seen: QueryEvent[] = [];
    const loop = session.run('start it')[Symbol.asyncIterator]();
    for (;;) {
      const step = await loop.next();
      if (step.done) break;
      seen.push(step.value);
      if (agentProgress(seen).length === 1) break;
    }
    const [agentId] = session.foregroundAgents();
    expect(session.backgroundAgent(agentId!)).toBe(true);
    const movedAt = seen.length;
    // Watch keeps this message's tool calls, and so their progress channel, open while the
    // agent goes on in the background to its end; what it reported meanwhile is read after.
    const task = session.tasks.list().find((entry) => entry.type === 'local_agent')!;
    expect((await session.tasks.waitFor(task.id, { timeoutMs: 30_000 })).status).toBe('completed');
    for (;;) {
      const step = await Promise.race([
        loop.next(),
        new Promise<'idle'>((resolve) => setTimeout(resolve, 200, 'idle')),
      ]);
      if (step === 'idle' || step.done) break;
      seen.push(step.value);
    }
    // It made two more responses in the background, and none of them reached the loop.
    expect(session.tasks.get(task.id)?.toolUseCount).toBe(2);
    expect(agentProgress(seen.slice(movedAt))).toEqual([]);
  });
});
