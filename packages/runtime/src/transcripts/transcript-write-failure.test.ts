import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import type { AgentEvent } from '@delegate/core';
import { agentCall, isMain } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { TranscriptStore, type TranscriptWriteFailure } from './transcript-store.js';

let current: TestSession | undefined;
let scratch: string;
// A file where the transcript folder should be: nothing can be created under it.
let notAFolder: string;

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'delegate-transcript-failure-'));
  notAFolder = join(scratch, 'transcripts');
  await writeFile(notAFolder, 'a file, not a folder\n');
});

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
  await rm(scratch, { recursive: true, force: true });
});

describe('a transcript that cannot be written', () => {
  it('is reported as an agent.warning for the main agent and for each sub-agent, once per file, and the run goes on', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'look', prompt: 'Look around' })],
        },
        { match: { agent: 'general-purpose' }, reply: 'Nothing here.' },
        { match: { when: isMain }, reply: 'All done.' },
      ]),
      session: { transcriptDir: notAFolder },
    });
    const { session } = current;
    const warnings: Extract<AgentEvent, { type: 'agent.warning' }>[] = [];
    session.events.on((event) => {
      if (event.type === 'agent.warning') warnings.push(event);
    });
    const { text } = await session.send('Look around');
    await session.flush();
    expect(text).toBe('All done.');
    const failed = warnings.filter((warning) => warning.code === 'TRANSCRIPT_WRITE_FAILED');
    const child = session.usage().children[0]!.agentId;
    // One warning per file (the session's, the sub-agent's lines and its metadata), not one per line.
    expect(failed.map((warning) => warning.agentId).sort()).toEqual([child, child, 'main'].sort());
    expect(failed[0]?.message).toMatch(
      /transcript could not be written.*delegate-transcript-failure-.*transcripts/,
    );
    expect(session.transcript?.writeErrors.length).toBeGreaterThan(failed.length);
  });

  it('tells onWriteError once per file, and a throwing handler does not stop the writes', async () => {
    const failures: TranscriptWriteFailure[] = [];
    const store = new TranscriptStore({
      directory: notAFolder,
      sessionId: 's1',
      onWriteError: (failure) => {
        failures.push(failure);
        throw new Error('handler broke');
      },
    });
    const line = (uuid: string) => ({
      type: 'user' as const,
      uuid,
      timestamp: new Date().toISOString(),
      message: { role: 'user' as const, content: 'hi' },
    });
    await store.append([line('u1')]);
    await store.append([line('u2')]);
    await store.append([line('u3')], 'a1');
    expect(failures.map((failure) => [failure.agentId, failure.path])).toEqual([
      [undefined, store.sessionPath()],
      ['a1', store.agentPath('a1')],
    ]);
    expect(failures[0]?.message).toMatch(/transcripts\/s1\.jsonl: EEXIST/);
    expect(store.writeErrors).toHaveLength(3);
  });
});

describe('new TranscriptStore()', () => {
  it.each([
    ['no options', undefined, 'options'],
    ['no directory', { sessionId: 's1' }, 'options.directory'],
    ['no session id', { directory: '/tmp/t' }, 'options.sessionId'],
    ['an empty session id', { directory: '/tmp/t', sessionId: '' }, 'options.sessionId'],
    [
      'onWriteError that is not a function',
      { directory: '/tmp/t', sessionId: 's1', onWriteError: true },
      'options.onWriteError',
    ],
  ])('refuses %s with INVALID_ARGUMENT naming the option', (_case, options, option) => {
    expect(() => new TranscriptStore(options as never)).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining(`new TranscriptStore(): ${option} must be`),
      }),
    );
  });
});
