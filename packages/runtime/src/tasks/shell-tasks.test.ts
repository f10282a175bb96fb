import { readFile, readdir } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';
import { agentCall, isMain } from '../__fixtures__/sim-helpers.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** Pids of live processes whose command line contains `marker` (zombies excluded). */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = await readFile(`/proc/${name}/stat`, 'utf8');
      if (/^\d+ \(.*\) Z/.test(status)) continue;
      const commandLine = (await readFile(`/proc/${name}/cmdline`, 'utf8')).replace(/\0/g, ' ');
      if (commandLine.includes(marker)) found.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

describe('background shells', () => {
  it('of the main agent and of finished sub-agents are listed by session.tasks and killed by session.abort()', async () => {
    // Unique sleep lengths mark the processes of this test in /proc.
    const seconds = 900_000 + Math.floor(Math.random() * 90_000);
    const mainMarker = `sleep ${seconds}`;
    const childMarker = `sleep ${seconds + 1}`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false, lastUserText: 'Start the shells' },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: mainMarker, run_in_background: true, description: 'main sleeper' },
            },
            agentCall({
              description: 'start a sleeper',
              prompt: 'Start a sleeper',
              subagent_type: 'general-purpose',
            }),
            agentCall({
              description: 'start a sleeper in the background',
              prompt: 'Start a sleeper',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: {
                command: `${childMarker} & ${childMarker}`,
                run_in_background: true,
                description: 'child sleeper',
              },
            },
          ],
        },
        { match: { agent: 'general-purpose', toolResult: 'Bash' }, reply: 'Started it.' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'They are running.' },
        { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'Noted.' },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    const { session } = current;
    await session.send('Start the shells', { waitForBackground: true });
    await session.flush();
    // The sub-agents that started the other shells have finished.
    const agents = session.tasks.list().filter((task) => task.type === 'local_agent');
    expect(agents.map((task) => task.status)).toEqual(['completed', 'completed']);
    const shells = session.tasks.list().filter((task) => task.type === 'local_bash');
    expect(shells.map((task) => [task.description, task.status]).sort()).toEqual([
      ['child sleeper', 'running'],
      ['child sleeper', 'running'],
      ['main sleeper', 'running'],
    ]);
    // Two sleeps each (and, unless bash replaced itself with the last one, the shell that runs them).
    expect(await waitUntil(async () => (await processesWith(childMarker)).length >= 4)).toBe(true);
    expect(await processesWith(mainMarker)).toHaveLength(1);

    session.abort();
    const left = async (): Promise<number> =>
      (await processesWith(mainMarker)).length + (await processesWith(childMarker)).length;
    // The kill ends with SIGKILL after a grace period: wait past it.
    await waitUntil(async () => (await left()) === 0, 8_000);
    expect(await processesWith(mainMarker)).toEqual([]);
    expect(await processesWith(childMarker)).toEqual([]);
    expect(
      await waitUntil(() =>
        session.tasks
          .list()
          .filter((task) => task.type === 'local_bash')
          .every((task) => task.status === 'killed'),
      ),
    ).toBe(true);
  });

  it('report how they ended in session.tasks', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'exit 3', run_in_background: true, description: 'fails' },
            },
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'true', run_in_background: true, description: 'works' },
            },
          ],
        },
        { match: { when: isMain, toolResult: 'Bash' }, reply: 'Started.' },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    const { session } = current;
    await session.send('Go');
    const shells = (): Array<[string, string]> =>
      session.tasks
        .list()
        .filter((task) => task.type === 'local_bash')
        .map((task): [string, string] => [task.description, task.status])
        .sort();
    expect(await waitUntil(() => shells().every(([, status]) => status !== 'running'))).toBe(true);
    expect(shells()).toEqual([
      ['fails', 'failed'],
      ['works', 'completed'],
    ]);
    // A finished shell is not a running background task: nothing keeps send() waiting.
    expect(session.tasks.runningBackgroundCount).toBe(0);
  });
});
