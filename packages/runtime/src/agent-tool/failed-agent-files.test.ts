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

describe('an agent type whose definition file failed to load', () => {
  it('is explained in the Agent tool error: which file, which line, why', async () => {
    const errors: string[] = [];
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'review', prompt: 'Review it', subagent_type: 'reviewer' }),
            agentCall({ description: 'other', prompt: 'Do it', subagent_type: 'nobody' }),
          ],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => {
            errors.push(...request.toolResults.map((result) => result.content));
            return resultText(request);
          },
        },
      ]),
    });
    const agents = join(current.cwd, '.claude', 'agents');
    await mkdir(agents, { recursive: true });
    const file = join(agents, 'reviewer.md');
    await writeFile(
      file,
      '---\nname: reviewer\ndescription: Reviews code\n  examples: many\ntools: Read\n---\nBody',
    );
    // A session without agentDefinitions loads them from the folders.
    const { DelegateSession } = await import('../session/session.js');
    const { createApiClient } = await import('../session/model-config.js');
    const session = await DelegateSession.create({
      cwd: current.cwd,
      homeDir: current.homeDir,
      transcriptDir: false,
      client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
    });
    try {
      await session.send('go');
    } finally {
      session.abort();
    }
    expect(errors[0]).toContain(
      `Agent type "reviewer" is not available because its definition failed to load: ${file}:4: error:`,
    );
    expect(errors[0]).toContain('Available agents: general-purpose');
    // A type no file meant to define keeps the usual message.
    expect(errors[1]).toContain('Agent type "nobody" not found. Available agents:');
  });
});
