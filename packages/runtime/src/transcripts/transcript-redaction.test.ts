import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { createUserMessage } from '@delegate/core';
import { agentCall, isMain } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { createApiClient } from '../session/model-config.js';
import { DelegateSession } from '../session/session.js';
import { REDACTED, secretRedactor } from '../util/redact-secrets.js';
import { readTranscript } from './read-transcript.js';
import { TranscriptStore } from './transcript-store.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

// Secrets that JSON escapes, or whose edge is a backslash: redacting the serialized line
// missed the first kind and broke the line's JSON on the second.
const SECRETS = ['\\s3cretpassw0rd', 's3cretpassw0rd\\', 'pa"ss"word123', 'tab\tsecret99'];

/** Every file of a transcript folder, with its text. */
async function transcriptFiles(directory: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(path, await readFile(path, 'utf8'));
  }
  return files;
}

function expectNoSecret(text: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(JSON.stringify(secret).slice(1, -1));
  }
}

describe('secrets in transcripts', () => {
  it('are redacted as text, every line stays valid JSON, and the session can be resumed', async () => {
    const said = `The passwords are ${SECRETS.join(' and ')} ok`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: 'start', toolResult: false },
          reply: [agentCall({ description: 'repeat', prompt: `Repeat: ${said}` })],
        },
        { match: { agent: 'general-purpose' }, reply: said },
        { match: { when: isMain, lastUserText: 'start' }, reply: said },
        { match: { when: isMain }, reply: 'Still here.' },
      ]),
      session: { secrets: SECRETS },
    });
    const { session, transcriptDir } = current;
    await session.send('start');
    await session.flush();

    const files = await transcriptFiles(transcriptDir);
    expect([...files.keys()].filter((path) => path.endsWith('.jsonl'))).toHaveLength(2);
    for (const [path, text] of files) {
      expectNoSecret(text, SECRETS);
      if (path.endsWith('.meta.json')) JSON.parse(text);
      else for (const line of text.trimEnd().split('\n')) JSON.parse(line);
    }
    const main = await readTranscript(session.transcript!.sessionPath());
    expect(JSON.stringify(main)).toContain(`The passwords are ${REDACTED} and ${REDACTED}`);

    const resumed = await DelegateSession.create({
      cwd: current.cwd,
      client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
      agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
      transcriptDir,
      homeDir: current.homeDir,
      sessionId: session.transcript!.sessionId,
      resume: true,
      secrets: SECRETS,
    });
    try {
      expect((await resumed.send('and now?')).text).toContain('Still here.');
    } finally {
      await resumed.close();
    }
  });

  it('never show in a line or a metadata file, whatever characters they hold (property)', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'delegate-transcript-redaction-'));
    try {
      // A NUL on each side of the secret, which the secret never holds: it occurs exactly once.
      const unit = fc.oneof(
        fc.constantFrom('\\', '"', '\t', '\n', '\r', '\u2028', '/', 'é', '😀', '\u001f'),
        fc.string({ minLength: 1, maxLength: 1 }),
      );
      const secret = fc
        .array(unit, { minLength: 8, maxLength: 24 })
        .map((units) => units.join(''))
        .filter((text) => !text.includes('\u0000') && text.length >= 8);
      let round = 0;
      await fc.assert(
        fc.asyncProperty(secret, async (value) => {
          const store = new TranscriptStore({
            directory,
            sessionId: `s${round++}`,
            redact: secretRedactor([value])!,
          });
          await store.append([createUserMessage({ content: `\u0000${value}\u0000` })], 'agent-1');
          await store.writeAgentMeta('agent-1', { description: value, [value]: 'key' });
          await store.flush();
          const line = await readFile(store.agentPath('agent-1'), 'utf8');
          const meta = await readFile(store.agentMetaPath('agent-1'), 'utf8');
          // Parsed, not searched as text: a random secret may spell a piece of JSON syntax.
          expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
          const [entry] = await readTranscript(store.agentPath('agent-1'));
          expect(entry).toMatchObject({ message: { content: `\u0000${REDACTED}\u0000` } });
          expect(JSON.parse(meta)).toEqual({ description: REDACTED, [REDACTED]: 'key' });
        }),
        { numRuns: 200 },
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
