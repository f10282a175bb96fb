import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;
let outside: string | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
  if (outside) await rm(outside, { recursive: true, force: true });
  outside = undefined;
});

describe('the working directory of a sub-agent', () => {
  it("refuses an Agent cwd outside the caller's allowed directories", async () => {
    outside = await mkdtemp(join(tmpdir(), 'delegate-outside-'));
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'x',
              prompt: 'write there',
              subagent_type: 'general-purpose',
              cwd: outside,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'pwned.txt', content: 'x' } },
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'done' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { permissionMode: 'acceptEdits' },
    });
    const { text } = await current.session.send('go');
    expect(text).toMatch(/outside/i);
    expect(existsSync(join(outside, 'pwned.txt'))).toBe(false);
  });

  it('pins a cwd given through a symbolic link to where the link pointed at the spawn', async () => {
    outside = await mkdtemp(join(tmpdir(), 'delegate-outside-'));
    const live: { cwd?: string } = {};
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'x',
              prompt: 'write there',
              subagent_type: 'general-purpose',
              cwd: 'link',
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: async () => {
            // Another process (a background shell, say) points the link elsewhere meanwhile.
            await rm(join(live.cwd!, 'link'));
            await symlink(outside!, join(live.cwd!, 'link'));
            return [
              { type: 'tool_use', name: 'Write', input: { file_path: 'pwned.txt', content: 'x' } },
            ];
          },
        },
        { match: { agent: 'general-purpose' }, reply: 'done' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { permissionMode: 'acceptEdits' },
    });
    live.cwd = current.cwd;
    await mkdir(join(current.cwd, 'sub'));
    await symlink(join(current.cwd, 'sub'), join(current.cwd, 'link'));
    await current.session.send('go');
    expect(existsSync(join(outside, 'pwned.txt'))).toBe(false);
    expect(existsSync(join(current.cwd, 'sub', 'pwned.txt'))).toBe(true);
  });
});
