import { appendFile, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { type AgentEvent, DelegateError } from '@delegate/core';
import { DelegateSession, createApiClient, readTranscript } from '../index.js';
import { agentCall, isMain } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { cutTornTail } from './cut-torn-tail.js';
import { TranscriptStore } from './transcript-store.js';

let current: TestSession | undefined;
const extraSessions: DelegateSession[] = [];

afterEach(async () => {
  for (const session of extraSessions.splice(0)) {
    session.abort();
    await session.flush();
  }
  await current?.cleanup();
  current = undefined;
});

/** Cuts the file in the middle of its last line, as a kill -9 during a write can. */
async function tearLastLine(path: string): Promise<void> {
  const text = await readFile(path, 'utf8');
  const lastStart = text.slice(0, -1).lastIndexOf('\n') + 1;
  const lastLength = text.length - 1 - lastStart;
  await truncate(path, Buffer.byteLength(text.slice(0, lastStart + Math.floor(lastLength / 2))));
}

const policy = () =>
  rules([
    { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
    {
      match: { when: isMain, toolResult: false },
      reply: [
        agentCall({
          description: 'job',
          prompt: 'Do the job',
          subagent_type: 'general-purpose',
          run_in_background: true,
        }),
      ],
    },
    { match: { when: isMain }, reply: 'ok' },
    { match: { agent: 'general-purpose', lastUserText: 'And the rest' }, reply: 'Rest done.' },
    { match: { agent: 'general-purpose' }, reply: 'Job done.' },
  ]);

/** Runs a background agent to its end and returns its id and transcript path. */
async function recordAgent(): Promise<{ agentId: string; path: string }> {
  current = await createTestSession({ policy: policy() });
  const events: AgentEvent[] = [];
  current.session.events.on((event) => events.push(event));
  await current.session.send('start', { waitForBackground: true });
  await current.session.flush();
  const agentId = events.find((event) => event.type === 'agent.started')!.agentId;
  return { agentId, path: current.session.transcript!.agentPath(agentId) };
}

/** The same session picked up again after the process was killed. */
async function restartSession(): Promise<{ session: DelegateSession; events: AgentEvent[] }> {
  const session = await DelegateSession.create({
    cwd: current!.cwd,
    client: createApiClient({ apiKey: 'k', baseURL: current!.sim.url }),
    agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
    transcriptDir: current!.transcriptDir,
    sessionId: current!.session.sessionId,
  });
  extraSessions.push(session);
  const events: AgentEvent[] = [];
  session.events.on((event) => events.push(event));
  return { session, events };
}

describe('readTranscript on files torn by a crash', () => {
  it('skips a torn last line with a warning naming the file and line', async () => {
    const { path } = await recordAgent();
    const whole = await readTranscript(path);
    await tearLastLine(path);
    const warnings: string[] = [];
    const entries = await readTranscript(path, { onWarning: (message) => warnings.push(message) });
    expect(entries.map((entry) => entry.uuid)).toEqual(
      whole.slice(0, -1).map((entry) => entry.uuid),
    );
    expect(warnings).toEqual([
      expect.stringContaining(`${path}:${whole.length}: skipped a torn last line`),
    ]);
  });

  it('refuses a torn line followed by other lines, naming the file and line number', async () => {
    const { path } = await recordAgent();
    const lines = (await readFile(path, 'utf8')).split('\n');
    const torn = [lines[0]!.slice(0, 30), ...lines.slice(1)].join('\n');
    await writeFile(path, torn);
    const error = await readTranscript(path).catch((caught: unknown) => caught);
    expect(DelegateError.isInstance(error)).toBe(true);
    expect((error as DelegateError).message).toContain(
      `${path}:1: torn or corrupt transcript line`,
    );
    expect((error as DelegateError).details).toMatchObject({ path, line: 1 });
    // Only that line is the problem: the lines after it stay readable once it is gone.
    expect((error as DelegateError).message).toContain('remove that one line');
    await writeFile(path, lines.slice(1).join('\n'));
    expect((await readTranscript(path)).length).toBe(
      lines.filter((line) => line !== '').length - 1,
    );
  });

  it('names the field of a line that is JSON but no message', async () => {
    const { path } = await recordAgent();
    const lines = (await readFile(path, 'utf8')).split('\n');
    const first = JSON.parse(lines[0]!) as Record<string, unknown>;
    delete first['uuid'];
    await writeFile(path, [JSON.stringify(first), ...lines.slice(1)].join('\n'));
    const error = await readTranscript(path).catch((caught: unknown) => caught);
    expect((error as DelegateError).message).toMatch(
      new RegExp(
        `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1: not a transcript message \\(uuid: `,
      ),
    );
  });

  it('tells a transcript it cannot open from a missing one', async () => {
    const { path } = await recordAgent();
    const missing = await readTranscript(`${path}.gone`).catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(missing, 'NOT_FOUND')).toBe(true);
    // A path through a file: the open fails with ENOTDIR, still "no transcript".
    const through = await readTranscript(join(path, 'x.jsonl')).catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(through, 'NOT_FOUND')).toBe(true);
    // A file that is there but cannot be opened (a link to itself: ELOOP, for root too, as
    // EACCES is for anyone else) says why instead of "no transcript".
    const loop = `${path}.loop`;
    await symlink(loop, loop);
    const unopenable = await readTranscript(loop).catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(unopenable, 'FILE_SYSTEM_ERROR')).toBe(true);
    expect((unopenable as DelegateError).message).toMatch(/^Cannot open the transcript at .*ELOOP/);
  });
});

describe('appending to a torn transcript', () => {
  it('cuts the torn tail first, so every line after it stays readable', async () => {
    const { path } = await recordAgent();
    const whole = await readTranscript(path);
    await tearLastLine(path);
    const store = new TranscriptStore({
      directory: current!.transcriptDir,
      sessionId: current!.session.sessionId,
    });
    const agentId = whole[0]!.agentId!;
    store.continueAfter(agentId, whole.at(-2)!.uuid);
    await store.append([{ ...whole.at(-1)!, uuid: 'after-the-crash' }], agentId);
    const entries = await readTranscript(path, {
      onWarning: (message) => expect.fail(`unexpected warning: ${message}`),
    });
    expect(entries.map((entry) => entry.uuid)).toEqual([
      ...whole.slice(0, -1).map((entry) => entry.uuid),
      'after-the-crash',
    ]);
    expect(store.repairs).toEqual([expect.stringContaining(`${path}: removed a torn last line`)]);
  });

  it('cutTornTail leaves clean files alone and empties a file that is one torn line', async () => {
    const { path } = await recordAgent();
    const before = await readFile(path, 'utf8');
    expect(await cutTornTail(path)).toBe(0);
    expect(await readFile(path, 'utf8')).toBe(before);
    await writeFile(path, '{"type":"user","uu');
    expect(await cutTornTail(path)).toBe(18);
    expect(await readFile(path, 'utf8')).toBe('');
    expect(await cutTornTail(`${path}.missing`)).toBe(0);
  });

  it('keeps a last line that is complete but lost its newline, and ends it', async () => {
    const { path } = await recordAgent();
    const whole = await readFile(path, 'utf8');
    await writeFile(path, whole.slice(0, -1));
    expect(await cutTornTail(path)).toBe(0);
    expect(await readFile(path, 'utf8')).toBe(whole);
  });
});

describe('resuming a torn transcript with DelegateSession.resumeAgent', () => {
  it('resumes after a crash tore the last line, warns, and leaves a transcript every later resume can read', async () => {
    const { agentId, path } = await recordAgent();
    const whole = await readTranscript(path);
    await tearLastLine(path);
    const { session, events } = await restartSession();
    await session.resumeAgent({ agentId, message: 'And the rest' });
    await session.send('', { waitForBackground: true });
    await session.flush();
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'agent.warning', agentId, code: 'TRANSCRIPT_TORN_LINE' }),
    );
    const entries = await readTranscript(path, {
      onWarning: (message) => expect.fail(`unexpected warning: ${message}`),
    });
    expect(entries.slice(0, whole.length - 1).map((entry) => entry.uuid)).toEqual(
      whole.slice(0, -1).map((entry) => entry.uuid),
    );
    entries.forEach((entry, index) =>
      expect(entry.parentUuid).toBe(index === 0 ? null : entries[index - 1]!.uuid),
    );
    expect(JSON.stringify(entries.at(-1))).toContain('Rest done.');

    // A second crash and resume still works.
    await appendFile(path, '{"type":"assistant","uuid":"half');
    const second = await restartSession();
    await second.session.resumeAgent({ agentId, message: 'And the rest' });
    await second.session.send('', { waitForBackground: true });
    await second.session.flush();
    const after = await readTranscript(path, {
      onWarning: (message) => expect.fail(`unexpected warning: ${message}`),
    });
    expect(after.length).toBeGreaterThan(entries.length);
  });

  it('refuses a transcript whose only line (the prompt) was torn, saying so', async () => {
    const { agentId, path } = await recordAgent();
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.slice(0, text.indexOf('\n') - 10));
    const { session } = await restartSession();
    const error = await session.resumeAgent({ agentId }).catch((caught: unknown) => caught);
    expect(DelegateError.isInstance(error)).toBe(true);
    expect((error as DelegateError).code).toBe('INVALID_ARGUMENT');
    expect((error as DelegateError).message).toContain(
      `Cannot resume agent ${agentId}: its transcript ${path} holds no complete message`,
    );
    expect(session.tasks.list()).toEqual([]);
  });
});
