import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

async function repository(cwd: string, files: Record<string, string>): Promise<void> {
  await mkdir(cwd, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(cwd, name, '..'), { recursive: true });
    await writeFile(join(cwd, name), content);
  }
  git('add', '.');
  git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');
}

describe('continuing a worktree agent whose worktree was removed', () => {
  it('makes the fresh worktree from its own repository and folder, not the session repository', async () => {
    let agentCwd = '';
    current = await createTestSession({
      policy: rules([
        { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
        {
          match: { when: isMain, lastUserText: 'first', toolResult: false },
          reply: () => [
            agentCall({
              description: 'look',
              prompt: 'look around',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
              name: 'looker',
              cwd: agentCwd,
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'again', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'SendMessage',
              input: { to: 'looker', message: 'look again' },
            },
          ],
        },
        { match: { when: isMain, toolResult: true }, reply: (request) => resultText(request) },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'pwd; ls' } }],
        },
        {
          match: { agent: 'general-purpose' },
          reply: (request) => `saw: ${resultText(request).replace(/\n/g, ' ')}`,
        },
      ]),
      session: { permissionMode: 'acceptEdits', backgroundTasksDisabled: true },
    });
    const { cwd, session } = current;
    await repository(cwd, { 'outer.txt': 'outer\n' });
    const nested = join(cwd, 'nested');
    await repository(nested, { 'sub/inner.txt': 'inner\n' });

    agentCwd = join(nested, 'sub');
    const first = await session.send('first');
    expect(first.text).toContain('inner.txt');
    // It changed nothing: its worktree is gone, and a continuation needs a fresh one.
    expect(first.text).not.toContain('worktreePath');
    const again = await session.send('again');
    const saw = again.text.split('\n').find((line) => line.startsWith('saw: '));
    expect(saw).toContain('inner.txt');
    expect(saw).not.toContain('outer.txt');
    expect(saw).toMatch(/\/sub /);
    expect(saw).not.toContain(`${cwd}/`);
  });
});
