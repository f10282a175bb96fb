import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { DelegateError } from '@delegate/core';
import { isMain, mainStartsBackgroundJobs } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { validateSessionOptions } from './session-options.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const AGENTS = 1_000;

describe('a thousand background agents', () => {
  it(
    'print no MaxListenersExceededWarning and leave a bounded number of records and tasks',
    { timeout: 120_000 },
    async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error): void => {
        warnings.push(`${warning.name}: ${warning.message}`);
      };
      process.on('warning', onWarning);
      try {
        current = await createTestSession({
          policy: rules([
            { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
            mainStartsBackgroundJobs(AGENTS),
            { match: { when: isMain, toolResult: 'Agent' }, reply: 'started them' },
            {
              match: { agent: 'general-purpose' },
              reply: (request) => `done with ${request.lastUserText}`,
            },
          ]),
          session: {
            maxBackgroundAgents: AGENTS,
            transcriptDir: false,
            maxRetainedAgents: 10,
            maxAgentSummaries: 50,
          },
        });
        const { session } = current;
        await session.send('go');
        await session.send('', { waitForBackground: true });
        await session.flush();
        expect(session.runtime.agents.retainedFinished).toBe(10);
        expect(session.runtime.agents.retainedSummaries).toBe(50);
        // Finished tasks are forgotten past the same bound (agents kept whole + summaries).
        expect(session.tasks.list().length).toBe(60);
        expect(Object.keys(session.context.getAppState().tasks).length).toBe(60);
        expect(session.tasks.list().every((task) => task.status === 'completed')).toBe(true);
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings.filter((warning) => warning.includes('MaxListeners'))).toEqual([]);
    },
  );
});

describe('maxAgentSummaries', () => {
  it('is validated at the boundary', () => {
    for (const value of [-1, 1.5, Number.NaN, '10']) {
      const error = (() => {
        try {
          validateSessionOptions({ cwd: '/tmp', maxAgentSummaries: value as number });
          return undefined;
        } catch (caught) {
          return caught;
        }
      })();
      expect(DelegateError.isInstance(error), String(value)).toBe(true);
      expect((error as DelegateError).message).toContain('maxAgentSummaries');
    }
    expect(() => validateSessionOptions({ cwd: '/tmp', maxAgentSummaries: 0 })).not.toThrow();
  });
});
