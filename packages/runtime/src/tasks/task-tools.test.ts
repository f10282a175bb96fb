import { lstat } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBackgroundShellOutput } from '@delegate/tools';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
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

  it("keeps a finished shell's output for TaskOutput until the session closes, which deletes the logs", async () => {
    let finishedId = '';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: 'start shells', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'echo kept-output', run_in_background: true },
            },
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'exec sleep 30', run_in_background: true },
            },
          ],
        },
        { match: { when: isMain, toolResult: 'Bash' }, reply: 'started' },
        {
          match: { when: isMain, lastUserText: 'read it', toolResult: false },
          reply: () => [
            { type: 'tool_use', name: 'TaskOutput', input: { task_id: finishedId, timeout: 0 } },
          ],
        },
        {
          match: { when: isMain, toolResult: 'TaskOutput' },
          reply: (request) => resultText(request),
        },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    const { session } = current;
    await session.send('start shells');
    const shells = session.tasks.list().filter((task) => task.type === 'local_bash');
    expect(shells).toHaveLength(2);
    const outputs = await Promise.all(shells.map((task) => getBackgroundShellOutput(task.id)));
    const finished = outputs.find((output) => output?.command === 'echo kept-output')!;
    const running = outputs.find((output) => output?.command === 'exec sleep 30')!;
    finishedId = finished.taskId;
    expect(await waitUntil(() => session.tasks.get(finishedId)?.status === 'completed')).toBe(true);

    // A later turn still reads the finished shell's output.
    const { text } = await session.send('read it');
    expect(text).toMatch(/status: completed[\s\S]*kept-output/);
    expect(await exists(finished.outputPath)).toBe(true);

    await session.close();
    expect(await exists(finished.outputPath)).toBe(false);
    expect(await exists(running.outputPath)).toBe(false);
    expect(await getBackgroundShellOutput(finishedId)).toBeUndefined();
    // The shell the close stopped has ended by the time it resolves, and its task says so.
    expect(isAlive(running.pid!)).toBe(false);
    expect(session.tasks.get(running.taskId)?.status).toBe('killed');
    expect(session.tasks.get(finishedId)?.status).toBe('completed');
  });
});

describe('TaskStop', () => {
  it('stops a background agent of the session in the default mode, with nobody to ask', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'slow job',
              prompt: 'work a long time',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => [
            {
              type: 'tool_use',
              name: 'TaskStop',
              input: {
                task_id: /task_id: (\S+)|\b(t[0-9a-f]{12})\b/
                  .exec(resultText(request))!
                  .slice(1)
                  .find(Boolean)!,
              },
            },
          ],
        },
        {
          match: { when: isMain, toolResult: 'TaskStop' },
          reply: (request) => resultText(request),
        },
        { match: { agent: 'general-purpose' }, reply: () => new Promise<string>(() => undefined) },
      ]),
      session: { permissionMode: 'default' },
    });
    const { text } = await current.session.send('start and stop');
    expect(text).toMatch(/^Stopped task t[0-9a-f]{12}/);
    expect(current.session.tasks.list()[0]?.status).toBe('killed');
  });
});
