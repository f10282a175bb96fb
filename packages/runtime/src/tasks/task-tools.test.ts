import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

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
});
