import { execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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

describe('readTranscript with a limit', () => {
  const line = (text: string, uuid: string): string =>
    JSON.stringify({
      type: 'user',
      uuid,
      parentUuid: null,
      sessionId: 's',
      timestamp: '2026-12-01T00:00:00.000Z',
      message: { role: 'user', content: text },
    });

  it('reads only as far as the first messages go, and treats a torn line as the full read does', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'delegate-transcript-limit-'));
    try {
      const path = join(directory, 'session.jsonl');
      // A corrupt line after the second message: a full read refuses the file, a limited one never gets there.
      const big = 'x'.repeat(200_000);
      await writeFile(
        path,
        `\n${line(big, 'u1')}\n\n${line('second', 'u2')}\n{not json\n${line('third', 'u3')}\n`,
      );
      await expect(readTranscript(path)).rejects.toMatchObject({
        message: expect.stringMatching(/:5: torn or corrupt/),
      });
      const first = await readTranscript(path, { limit: 1 });
      expect(first.map((entry) => entry.uuid)).toEqual(['u1']);
      expect((await readTranscript(path, { limit: 2 })).map((entry) => entry.uuid)).toEqual([
        'u1',
        'u2',
      ]);
      await expect(readTranscript(path, { limit: 3 })).rejects.toMatchObject({
        message: expect.stringMatching(/:5: torn or corrupt/),
      });

      // Only a torn line (a crash while the first message was written): nothing, with the warning.
      const warnings: string[] = [];
      await writeFile(path, `${line('cut', 'u9').slice(0, 40)}\n\n`);
      expect(
        await readTranscript(path, { limit: 1, onWarning: (message) => warnings.push(message) }),
      ).toEqual([]);
      expect(warnings).toEqual([
        expect.stringMatching(/session\.jsonl:1: skipped a torn last line/),
      ]);
      await writeFile(path, '\n \n');
      expect(await readTranscript(path, { limit: 1 })).toEqual([]);
      for (const limit of [0, 1.5, -1]) {
        await expect(readTranscript(path, { limit })).rejects.toThrow(
          /options\.limit must be a whole number above 0/,
        );
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
