import { execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { readTranscript } from '../transcripts/read-transcript.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('session transcripts', () => {
  it('writes the session transcript as JSONL and reads it back past a torn last line', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'answer' }) });
    await current.session.send('question');
    await current.session.flush();
    const path = current.session.transcript!.sessionPath();
    await appendFile(path, '{"type":"user","uuid":"torn');
    const entries = await readTranscript(path);
    expect(entries.map((entry) => entry.type)).toEqual(['user', 'user', 'assistant']);
    expect(entries[2]!.parentUuid).toBe(entries[1]!.uuid);
    expect((await readFile(path, 'utf8')).split('\n').length).toBe(4);
    expect(join(current.transcriptDir, `${current.session.transcript!.sessionId}.jsonl`)).toBe(
      path,
    );
  });
});

describe('readTranscript on something that is not a file', () => {
  it('refuses a FIFO, a device and a directory at once, naming the path, instead of blocking or reading forever', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'delegate-transcript-fifo-'));
    try {
      const fifo = join(directory, 'session.jsonl');
      // Nobody ever writes to it: a plain read would wait for a writer forever.
      execFileSync('mkfifo', [fifo]);
      for (const path of [fifo, '/dev/zero', directory]) {
        await expect(readTranscript(path)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          message: expect.stringContaining(`${path} is not a regular file`),
        });
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
