import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltinTools } from '@delegate/tools';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { watchTool } from '../__fixtures__/watch-tool.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

async function shellPid(file: string): Promise<number> {
  return existsSync(file) ? Number((await readFile(file, 'utf8')).trim()) : 0;
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
      if (event.type !== 'progress') continue;
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
      if (event.type !== 'progress') continue;
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
});
