import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
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

describe('a foreground worktree agent that fails after changing files', () => {
  it('says where its kept worktree is in its result', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Write',
              input: { file_path: 'work.txt', content: 'hours of work\n' },
            },
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'never sent' },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'work',
              prompt: 'do the work',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
            }),
          ],
        },
        { match: { when: isMain }, reply: (request) => resultText(request) },
      ]),
      // Every request after its Write fails, retries included.
      sim: {
        faults: [
          {
            kind: 'api_error',
            retryAfterSeconds: 0.001,
            match: { agent: 'general-purpose', toolResult: 'Write' },
          },
        ],
      },
      session: { permissionMode: 'acceptEdits' },
    });
    const { cwd, session } = current;
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await writeFile(join(cwd, 'README.md'), '# repo\n');
    git('add', '.');
    git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');

    const result = await session.send('go');
    expect(result.text).toContain('The agent stopped early');
    const path = /worktreePath: (\S+)/.exec(result.text)?.[1];
    const branch = /worktreeBranch: (\S+)/.exec(result.text)?.[1];
    expect(path).toBeDefined();
    expect(await readFile(join(path!, 'work.txt'), 'utf8')).toBe('hours of work\n');
    expect(git('branch', '--list', branch!)).toContain(branch!);
  });
});
