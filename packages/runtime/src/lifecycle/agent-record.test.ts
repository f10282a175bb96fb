import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe("a sub-agent's permission checks", () => {
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

  it.each([
    ['a general-purpose agent', 'general-purpose', { subagent_type: 'general-purpose' }],
    ['a fork (bubble mode: the parent judges, nobody is asked)', 'fork', {}],
  ])(
    'never lets a background agent ask, %s: its questions become denials',
    async (_name, agent, type) => {
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
              agentCall({ description: 'bg', prompt: 'run it', run_in_background: true, ...type }),
            ],
          },
          {
            match: { agent, toolResult: 'Bash' },
            reply: (request) => `bash said: ${resultText(request)}`,
          },
          {
            match: { agent },
            reply: [
              { type: 'tool_use', name: 'Bash', input: { command: 'touch bg.txt; echo nope' } },
            ],
          },
          { match: { when: isMain, toolResult: 'Agent' }, reply: 'started' },
        ]),
        session: {
          forkEnabled: true,
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
      expect(text).not.toContain('nope');
    },
  );
});
