import { execFileSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import type { AgentDefinition } from '@delegate/core';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const HOSTILE_TYPE = '../../../escaped --force/x';

describe('worktrees of agents with hostile type names', () => {
  it('stay inside the worktree root, on a branch under delegate/', async () => {
    const general = getBuiltInAgents().find((agent) => agent.agentType === 'general-purpose')!;
    const hostile: AgentDefinition = {
      ...general,
      agentType: HOSTILE_TYPE,
      source: 'projectSettings',
    };
    current = await createTestSession({
      agents: [hostile],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'edit',
              prompt: 'add a file',
              subagent_type: HOSTILE_TYPE,
              isolation: 'worktree',
            }),
          ],
        },
        {
          match: { agent: HOSTILE_TYPE, toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'added.txt', content: 'x\n' } },
          ],
        },
        { match: { agent: HOSTILE_TYPE }, reply: 'Added.' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { permissionMode: 'acceptEdits' },
    });
    const { cwd, root, session } = current;
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await writeFile(join(cwd, 'README.md'), '# repo\n');
    git('add', '.');
    git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');

    const { text } = await session.send('go');
    const path = /worktreePath: (\S+)/.exec(text)?.[1];
    const branch = /worktreeBranch: (\S+)/.exec(text)?.[1];
    expect(path, text).toBeDefined();
    const inside = relative(join(root, 'worktrees'), path!);
    expect(inside.startsWith('..')).toBe(false);
    expect(inside.split('/')).toHaveLength(1);
    expect(inside.startsWith('agent-')).toBe(true);
    expect(branch!.startsWith('delegate/agent-')).toBe(true);
    expect(git('branch', '--list', branch!)).toContain(branch!);
    // Nothing was made next to the project or above the worktree root.
    expect((await readdir(root)).sort()).toEqual(['transcripts', 'work', 'worktrees']);
  });
});
