import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('background places', () => {
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
});
