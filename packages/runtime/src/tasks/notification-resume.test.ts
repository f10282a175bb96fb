import { appendFile, mkdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type JournalEntry, rules } from '@delegate/api-sim';
import { DelegateError } from '@delegate/core';
import { DelegateSession } from '../session/session.js';
import { createApiClient } from '../session/model-config.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import {
  agentOf,
  customAgent,
  isMain,
  mainStartsBackgroundJob,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;
const resumed: DelegateSession[] = [];

afterEach(async () => {
  for (const session of resumed.splice(0)) {
    session.abort();
    await session.flush();
  }
  await current?.cleanup();
  current = undefined;
});

const worker = customAgent('---\nname: worker\ndescription: Works.\ntools: Glob\n---\nYou work.');

/** How often `taskId` appears in the notifications of a request body. */
function timesNotified(entry: JournalEntry | undefined, taskId: string): number {
  const text = JSON.stringify(entry?.body ?? {});
  return text.split(`<task-notification>\\ntask-id: ${taskId}\\n`).length - 1;
}

const mainRequests = (entries: readonly JournalEntry[]) =>
  entries.filter((entry) => agentOf(entry) === undefined);

/**
 * A session whose background agent finished while the main agent was idle: its notification
 * is queued, and the session is dropped before any turn takes it (as a process that stops).
 */
async function dropWithQueuedNotification(): Promise<{ taskId: string; path: string }> {
  // The agent ends only once the main agent's turn has ended, so no turn takes its notification.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  current = await createTestSession({
    agents: [worker],
    policy: rules([
      mainStartsBackgroundJob('Do the job'),
      { match: { when: isMain }, reply: 'noted' },
      {
        match: { agent: 'worker' },
        reply: async () => {
          await released;
          return 'job done';
        },
      },
    ]),
  });
  const { session } = current;
  await session.send('start');
  release();
  expect(await waitUntil(() => session.tasks.pendingNotifications === 1)).toBe(true);
  const [task] = session.tasks.list();
  await session.flush();
  session.abort();
  await session.flush();
  expect(task?.notification?.status).toBe('undeliverable');
  // Left undeliverable by the abort, it still counts as notified: the task had ended.
  expect(session.notifiedTaskStatus(task!.id)).toBe('completed');
  return { taskId: task!.id, path: session.transcript!.sessionPath() };
}

/** The same session picked up from its transcript by a new process. */
async function resume(): Promise<DelegateSession> {
  const session = await DelegateSession.create({
    cwd: current!.cwd,
    client: createApiClient({ apiKey: 'k', baseURL: current!.sim.url }),
    agentDefinitions: { activeAgents: [worker], allAgents: [worker] },
    transcriptDir: current!.transcriptDir,
    homeDir: current!.homeDir,
    sessionId: current!.session.sessionId,
    resume: true,
  });
  resumed.push(session);
  return session;
}

/** Sends `prompt` in `session`; returns the main agent's requests it made. */
async function sendAndJournal(session: DelegateSession, prompt: string): Promise<JournalEntry[]> {
  const before = current!.sim.journal.entries.length;
  await session.send(prompt);
  await session.flush();
  return mainRequests(current!.sim.journal.entries.slice(before));
}

/** Cuts the file in the middle of the user message `uuid`, dropping what follows (a crash mid-write). */
async function tearUserLine(path: string, uuid: string): Promise<void> {
  const lines = (await readFile(path, 'utf8')).split('\n');
  const index = lines.findIndex((line) => {
    const entry = line ? (JSON.parse(line) as { type: string; uuid: string }) : undefined;
    return entry?.type === 'user' && entry.uuid === uuid;
  });
  expect(index).toBeGreaterThan(0);
  const kept = [...lines.slice(0, index), lines[index]!.slice(0, lines[index]!.length / 2)];
  await truncate(path, Buffer.byteLength(kept.join('\n')));
}

describe('task notifications across a resumed session', () => {
  it('delivers a notification queued before the process stopped exactly once, and never again after delivery', async () => {
    const { taskId, path } = await dropWithQueuedNotification();
    const lines = await readTranscript(path);
    expect(lines.filter((line) => line.queuedNotification?.taskId === taskId)).toHaveLength(1);

    const first = await resume();
    const [task] = first.tasks.list();
    expect(task).toMatchObject({ id: taskId, status: 'completed', description: 'job' });
    expect(task?.notification?.status).toBe('queued');
    expect(first.tasks.pendingNotifications).toBe(1);
    // A host resuming interrupted agents learns this one had finished and told its parent.
    expect(first.notifiedTaskStatus(taskId)).toBe('completed');
    expect(first.notifiedTaskStatus('t-unknown')).toBeUndefined();
    const requests = await sendAndJournal(first, 'what happened?');
    expect(requests.length).toBeGreaterThan(0);
    // Its first request carries it, and every later one holds it once, in the history.
    for (const request of requests) expect(timesNotified(request, taskId)).toBe(1);
    expect(first.tasks.get(taskId)?.notification?.status).toBe('delivered');
    expect(first.messages.filter((message) => message.type === 'system')).toEqual([]);
    first.abort();
    await first.flush();

    const second = await resume();
    expect(second.tasks.pendingNotifications).toBe(0);
    expect(second.tasks.list()).toEqual([]);
    // Delivered in the last process: known from the transcript alone.
    expect(second.notifiedTaskStatus(taskId)).toBe('completed');
    const later = await sendAndJournal(second, 'anything else?');
    expect(later.length).toBeGreaterThan(0);
    for (const request of later) expect(timesNotified(request, taskId)).toBe(1);

    // The transcript stays one readable chain across the three processes.
    const entries = await readTranscript(path);
    entries.forEach((entry, index) =>
      expect(entry.parentUuid).toBe(index === 0 ? null : entries[index - 1]!.uuid),
    );
  });

  it('keeps a restored notification with its task, as undeliverable, when the resumed session is aborted first', async () => {
    const { taskId } = await dropWithQueuedNotification();
    const session = await resume();
    session.abort();
    await session.flush();
    const task = session.tasks.get(taskId);
    expect(task?.notification?.status).toBe('undeliverable');
    expect(task?.notification?.text).toContain('result:\njob done');
    // Still owed: the next resume queues it again.
    const again = await resume();
    expect(again.tasks.get(taskId)?.notification?.status).toBe('queued');
  });

  it('neither loses nor repeats a notification whose delivery line a crash tore', async () => {
    const { taskId, path } = await dropWithQueuedNotification();
    const first = await resume();
    const [message] = (await readTranscript(path))
      .filter((line) => line.queuedNotification?.taskId === taskId)
      .map((line) => line.queuedNotification!.message);
    await sendAndJournal(first, 'what happened?');
    first.abort();
    await first.flush();
    // The crash came while the user message carrying the notification was written.
    await tearUserLine(path, message!.uuid);

    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    let second: DelegateSession;
    try {
      second = await resume();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([expect.stringContaining('skipped a torn last line')]);
    expect(second.tasks.pendingNotifications).toBe(1);
    const requests = await sendAndJournal(second, 'and now?');
    for (const request of requests) expect(timesNotified(request, taskId)).toBe(1);
    second.abort();
    await second.flush();

    const third = await resume();
    expect(third.tasks.pendingNotifications).toBe(0);
    const later = await sendAndJournal(third, 'anything else?');
    for (const request of later) expect(timesNotified(request, taskId)).toBe(1);
    expect(second.transcript!.repairs).toEqual([
      expect.stringContaining(`${path}: removed a torn last line`),
    ]);
  });

  it('delivers once after a crash tore a later line of the transcript', async () => {
    const { taskId, path } = await dropWithQueuedNotification();
    await appendFile(path, '{"type":"assistant","uuid":"cut-off-by-a-cra');
    const session = await resume();
    expect(session.tasks.pendingNotifications).toBe(1);
    const requests = await sendAndJournal(session, 'what happened?');
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) expect(timesNotified(request, taskId)).toBe(1);
    session.abort();
    await session.flush();
    expect((await resume()).tasks.pendingNotifications).toBe(0);
  });

  it('skips a record line that holds no valid notification with a warning naming it, and still delivers the others', async () => {
    const { taskId, path } = await dropWithQueuedNotification();
    const bad = {
      type: 'system',
      subtype: 'task_notification_queued',
      uuid: 'bad-record-line',
      timestamp: new Date().toISOString(),
      content: 'hand-edited',
      queuedNotification: { taskId: 't-broken' },
    };
    await appendFile(path, `${JSON.stringify(bad)}\n`);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const session = await resume();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.message)).toEqual([
        expect.stringContaining(`${path}: the task_notification_queued line bad-record-line`),
      ]);
      expect((warnings[0] as Error & { code?: string }).code).toBe(
        'DELEGATE_BAD_TRANSCRIPT_RECORD',
      );
      expect(session.tasks.pendingNotifications).toBe(1);
      const requests = await sendAndJournal(session, 'what happened?');
      for (const request of requests) expect(timesNotified(request, taskId)).toBe(1);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('refuses resume without a session id, without transcripts, or without a transcript file, saying which', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'answer' }) });
    const base = {
      cwd: current.cwd,
      client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
      agentDefinitions: { activeAgents: [], allAgents: [] },
      homeDir: current.homeDir,
      resume: true,
    };
    const errorOf = (options: Parameters<typeof DelegateSession.create>[0]) =>
      DelegateSession.create(options).then(
        () => expect.fail('expected an error'),
        (error: unknown) => error as DelegateError,
      );
    const noId = await errorOf({ ...base, transcriptDir: current.transcriptDir });
    expect(noId.code).toBe('INVALID_ARGUMENT');
    expect(noId.message).toContain('options.resume needs options.sessionId');
    const off = await errorOf({ ...base, sessionId: 's1', transcriptDir: false });
    expect(off.code).toBe('INVALID_ARGUMENT');
    expect(off.message).toContain('options.transcriptDir is false');
    const missing = await errorOf({
      ...base,
      sessionId: 'no-such-session',
      transcriptDir: current.transcriptDir,
    });
    expect(DelegateError.isInstance(missing)).toBe(true);
    expect(missing.code).toBe('NOT_FOUND');
    expect(missing.message).toContain(`${current.transcriptDir}/no-such-session.jsonl`);
  });

  it.each([
    ['empty', '', 'records nothing (it is empty)'],
    ['of blank lines', '\n \n', 'records no message'],
  ])(
    'warns that a resumed session whose transcript is %s starts with no conversation, saying which',
    async (_case, content, says) => {
      current = await createTestSession({ policy: rules([], { fallback: 'answer' }) });
      const path = join(current.transcriptDir, 'quiet-session.jsonl');
      await mkdir(current.transcriptDir, { recursive: true });
      await writeFile(path, content);
      const warnings: Array<Error & { code?: string }> = [];
      const onWarning = (warning: Error) => warnings.push(warning);
      process.on('warning', onWarning);
      try {
        const session = await DelegateSession.create({
          cwd: current.cwd,
          client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
          agentDefinitions: { activeAgents: [], allAgents: [] },
          homeDir: current.homeDir,
          transcriptDir: current.transcriptDir,
          sessionId: 'quiet-session',
          resume: true,
        });
        await new Promise((resolve) => setImmediate(resolve));
        expect(session.messages).toEqual([]);
        expect(warnings.map((warning) => [warning.code, warning.message])).toEqual([
          [
            'DELEGATE_EMPTY_TRANSCRIPT',
            `DelegateSession.create: options.resume: the transcript of session quiet-session at ${path} ${says}, so the session starts with no conversation.`,
          ],
        ]);
        await session.flush();
      } finally {
        process.off('warning', onWarning);
      }
    },
  );
});
