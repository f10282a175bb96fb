import { appendFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type JournalEntry, rules } from '@delegate/api-sim';
import type { AgentDefinition, AgentEvent } from '@delegate/core';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { DelegateSession } from '../session/session.js';
import { createApiClient } from '../session/model-config.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import type { TranscriptEntry } from '../transcripts/transcript-store.js';
import {
  agentCall,
  agentOf,
  backgroundJobCall,
  customAgent,
  isMain,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;
const resumed: DelegateSession[] = [];
const gates: Array<() => void> = [];

afterEach(async () => {
  for (const open of gates.splice(0)) open();
  for (const session of resumed.splice(0)) {
    session.abort();
    await session.flush();
  }
  await current?.cleanup();
  current = undefined;
});

const worker = customAgent('---\nname: worker\ndescription: Works.\ntools: Glob\n---\nYou work.');
const agents: AgentDefinition[] = [...getBuiltInAgents(), worker];

/** A gate the simulator's answers wait on (opened by the test, or at the latest by afterEach). */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { opened, open };
}

/** How often `taskId` appears in the notifications of a request body. */
function timesNotified(entry: JournalEntry | undefined, taskId: string): number {
  const text = JSON.stringify(entry?.body ?? {});
  return text.split(`<task-notification>\\ntask-id: ${taskId}\\n`).length - 1;
}

const forkRequests = (entries: readonly JournalEntry[]) =>
  entries.filter((entry) => agentOf(entry) === 'fork');
const mainRequests = (entries: readonly JournalEntry[]) =>
  entries.filter((entry) => agentOf(entry) === undefined);

const queuedLinesOf = (entries: readonly TranscriptEntry[], taskId: string) =>
  entries.filter((entry) => entry.queuedNotification?.taskId === taskId);

type Dropped = { forkId: string; workerTaskId: string; forkPath: string; mainPath: string };

/**
 * What the fork's requests after the first two do: `answer` replies at once; `hold` waits
 * for the gate (the session is dropped meanwhile).
 */
type ForkMode = { next: 'answer' } | { next: 'hold'; until: Promise<void>; arrived: () => void };

/**
 * A session whose main agent starts a background fork; the fork starts a background worker
 * that finishes while the fork's second request is in flight, and the session is dropped
 * before the fork's next request takes the notification waiting in its inbox.
 */
async function dropWithInboxNotification(mode: {
  fork: ForkMode;
  /** Stop the fork (the session goes on) before the session is dropped. */
  stopFork?: boolean;
}): Promise<Dropped> {
  const forkWaiting = gate();
  const hold = gate();
  let forkCalls = 0;
  current = await createTestSession({
    agents: [worker],
    session: { forkEnabled: true },
    policy: rules([
      {
        match: { when: isMain, lastUserText: 'Split the work', toolResult: false },
        reply: [
          agentCall({ description: 'split', prompt: 'Split the work', run_in_background: true }),
        ],
      },
      { match: { when: isMain }, reply: 'noted' },
      {
        match: { agent: 'worker' },
        reply: async () => {
          // Finishes only while the fork is mid-turn, so no request of the fork has taken it.
          await forkWaiting.opened;
          return 'job done';
        },
      },
      {
        match: { agent: 'fork' },
        reply: async () => {
          forkCalls++;
          if (forkCalls === 1) return [backgroundJobCall('Do the job')];
          if (forkCalls === 2) {
            forkWaiting.open();
            await hold.opened;
            return 'too late';
          }
          const fork = mode.fork;
          if (fork.next === 'hold') {
            fork.arrived();
            await fork.until;
            return 'too late';
          }
          return 'fork done';
        },
      },
    ]),
  });
  const { session } = current;
  await session.send('Split the work');
  const workerTask = () => session.tasks.list().find((task) => task.agentType === 'worker');
  expect(await waitUntil(() => workerTask()?.notification?.status === 'queued')).toBe(true);
  const fork = session.tasks.list().find((task) => task.agentType === 'fork')!;
  if (mode.stopFork) {
    session.stopTask(fork.id);
    // The stopped fork hands it on: queued for the main agent with the fork's own report.
    expect(await waitUntil(() => session.tasks.pendingNotifications === 2)).toBe(true);
  }
  // The fork's request is held: wait for the transcript lines only, not for the runs.
  await session.transcript!.flush();
  session.abort();
  await session.flush();
  const task = workerTask()!;
  // Nobody took it: the fork was stopped with it still in its inbox, and (unless the fork
  // was stopped while the session went on) it was not handed on.
  expect(task.notification?.status).toBe('undeliverable');
  expect(session.tasks.pendingNotifications).toBe(0);
  return {
    forkId: fork.agentId!,
    workerTaskId: task.id,
    forkPath: session.transcript!.agentPath(fork.agentId!),
    mainPath: session.transcript!.sessionPath(),
  };
}

/** A new process: the main session picked up from its transcript (`sessionId` defaults to the first one's). */
async function resume(
  options: { sessionId?: string; resume?: boolean } = {},
): Promise<DelegateSession> {
  const session = await DelegateSession.create({
    cwd: current!.cwd,
    client: createApiClient({ apiKey: 'k', baseURL: current!.sim.url }),
    agentDefinitions: { activeAgents: agents, allAgents: agents },
    transcriptDir: current!.transcriptDir,
    homeDir: current!.homeDir,
    forkEnabled: true,
    sessionId: options.sessionId ?? current!.session.sessionId,
    resume: options.resume ?? true,
  });
  resumed.push(session);
  return session;
}

/** Resumes the fork in `session` and lets it and the main agent finish; returns the requests made meanwhile. */
async function resumeFork(session: DelegateSession, agentId: string, sessionId?: string) {
  const before = current!.sim.journal.entries.length;
  const launched = await session.resumeAgent({ agentId, ...(sessionId ? { sessionId } : {}) });
  expect(launched.status).toBe('async_launched');
  await session.send('', { waitForBackground: true });
  await session.flush();
  return current!.sim.journal.entries.slice(before);
}

describe('notifications waiting in a running sub-agent inbox, across a resume', () => {
  it('records the notification in the fork transcript and delivers it once to the resumed fork, never again after delivery', async () => {
    const { forkId, workerTaskId, forkPath, mainPath } = await dropWithInboxNotification({
      fork: { next: 'answer' },
    });
    // Recorded in the fork's own transcript, not in the main one; never sent to the model.
    const forkLines = await readTranscript(forkPath);
    expect(queuedLinesOf(forkLines, workerTaskId)).toHaveLength(1);
    const [queued] = queuedLinesOf(forkLines, workerTaskId);
    expect(queued).toMatchObject({ type: 'system', subtype: 'task_notification_queued' });
    expect(
      forkLines.filter((line) => line.uuid === queued!.queuedNotification!.message.uuid),
    ).toEqual([]);
    expect(queuedLinesOf(await readTranscript(mainPath), workerTaskId)).toEqual([]);
    const firstRun = forkRequests(current!.sim.journal.entries);
    expect(firstRun).toHaveLength(2);
    for (const request of firstRun) expect(timesNotified(request, workerTaskId)).toBe(0);

    const first = await resume();
    expect(first.tasks.pendingNotifications).toBe(0);
    const requests = await resumeFork(first, forkId);
    const forkAfter = forkRequests(requests);
    expect(forkAfter.length).toBeGreaterThan(0);
    // The resumed fork's first request carries it, and every later one holds it once; the
    // record line itself never reaches the model.
    for (const request of forkAfter) {
      expect(timesNotified(request, workerTaskId)).toBe(1);
      expect(JSON.stringify(request.body)).not.toContain(`queued for agent ${forkId}`);
    }
    expect(first.tasks.get(workerTaskId)).toMatchObject({
      status: 'completed',
      description: 'job',
    });
    expect(first.tasks.get(workerTaskId)?.notification?.status).toBe('delivered');
    // The main agent hears of the fork, never of the fork's worker.
    const mainAfter = mainRequests(requests);
    expect(mainAfter.length).toBeGreaterThan(0);
    for (const request of mainRequests(current!.sim.journal.entries))
      expect(timesNotified(request, workerTaskId)).toBe(0);
    // Its delivery is the user message with the recorded uuid, in the fork's transcript.
    const afterDelivery = await readTranscript(forkPath);
    const delivered = afterDelivery.filter(
      (line) => line.type === 'user' && line.uuid === queued!.queuedNotification!.message.uuid,
    );
    expect(delivered).toHaveLength(1);
    first.abort();
    await first.flush();

    const second = await resume();
    const later = await resumeFork(second, forkId);
    expect(forkRequests(later).length).toBeGreaterThan(0);
    // In the history once, not queued a second time.
    for (const request of forkRequests(later)) expect(timesNotified(request, workerTaskId)).toBe(1);
    expect(second.tasks.get(workerTaskId)).toBeUndefined();
    for (const request of mainRequests(current!.sim.journal.entries))
      expect(timesNotified(request, workerTaskId)).toBe(0);

    // The fork's transcript stays one chain across the three processes, with one record line.
    const entries = await readTranscript(forkPath);
    expect(queuedLinesOf(entries, workerTaskId)).toHaveLength(1);
    entries.forEach((entry, index) =>
      expect(entry.parentUuid).toBe(index === 0 ? null : entries[index - 1]!.uuid),
    );
  });

  it('skips a record line of the fork transcript that holds no valid notification with an agent.warning, and delivers the valid one once', async () => {
    const { forkId, workerTaskId, forkPath } = await dropWithInboxNotification({
      fork: { next: 'answer' },
    });
    const bad = {
      type: 'system',
      subtype: 'task_notification_queued',
      uuid: 'bad-inbox-record',
      timestamp: new Date().toISOString(),
      content: 'hand-edited',
      queuedNotification: { taskId: '' },
    };
    await appendFile(forkPath, `${JSON.stringify(bad)}\n`);
    const session = await resume();
    const warnings: AgentEvent[] = [];
    session.events.on((event) => {
      if (event.type === 'agent.warning') warnings.push(event);
    });
    const requests = await resumeFork(session, forkId);
    expect(warnings).toEqual([
      expect.objectContaining({
        agentId: forkId,
        code: 'TRANSCRIPT_BAD_RECORD',
        message: expect.stringContaining(
          `${forkPath}: the task_notification_queued line bad-inbox-record`,
        ),
      }),
    ]);
    const forkAfter = forkRequests(requests);
    expect(forkAfter.length).toBeGreaterThan(0);
    for (const request of forkAfter) expect(timesNotified(request, workerTaskId)).toBe(1);
  });

  it('records it in the transcript of another session that resumes the fork, which delivers it once', async () => {
    const resumedHold = gate();
    const arrived = gate();
    const fork: ForkMode = { next: 'hold', until: resumedHold.opened, arrived: arrived.open };
    const { forkId, workerTaskId } = await dropWithInboxNotification({ fork });

    // A new session (not the one that recorded the fork) resumes it from the first one.
    const first = await resume({ sessionId: 'second-session', resume: false });
    const launched = await first.resumeAgent({
      agentId: forkId,
      sessionId: current!.session.sessionId,
    });
    expect(launched.status).toBe('async_launched');
    await arrived.opened;
    await first.transcript!.flush();
    // Its first request there carries it (then the session is dropped while it streams).
    const held = forkRequests(current!.sim.journal.entries).at(-1);
    expect(timesNotified(held, workerTaskId)).toBe(1);
    // Its transcript in the new session holds the record too (the history was written anew),
    // and the delivery after it.
    const copied = await readTranscript(first.transcript!.agentPath(forkId));
    const [queued] = queuedLinesOf(copied, workerTaskId);
    expect(queuedLinesOf(copied, workerTaskId)).toHaveLength(1);
    const uuids = copied.map((line) => line.uuid);
    const delivery = uuids.indexOf(queued!.queuedNotification!.message.uuid);
    expect(delivery).toBeGreaterThan(uuids.indexOf(queued!.uuid));
    first.abort();
    await first.flush();
    resumedHold.open();

    Object.assign(fork, { next: 'answer' });
    // The second session never had a main turn: the same session id, not resumed.
    const again = await resume({ sessionId: 'second-session', resume: false });
    const requests = await resumeFork(again, forkId);
    const forkAfter = forkRequests(requests);
    expect(forkAfter.length).toBeGreaterThan(0);
    for (const request of forkAfter) expect(timesNotified(request, workerTaskId)).toBe(1);
    for (const request of mainRequests(current!.sim.journal.entries))
      expect(timesNotified(request, workerTaskId)).toBe(0);
  });

  it('gives a notification a stopped fork handed to the main agent to the main agent only, after both are resumed', async () => {
    const { forkId, workerTaskId, forkPath, mainPath } = await dropWithInboxNotification({
      fork: { next: 'answer' },
      stopFork: true,
    });
    expect(queuedLinesOf(await readTranscript(forkPath), workerTaskId)).toHaveLength(1);
    expect(queuedLinesOf(await readTranscript(mainPath), workerTaskId)).toHaveLength(1);

    const first = await resume();
    // Owed to the main agent (with the fork's own report), not to the fork.
    expect(first.tasks.pendingNotifications).toBe(2);
    const requests = await resumeFork(first, forkId);
    const forkAfter = forkRequests(requests);
    expect(forkAfter.length).toBeGreaterThan(0);
    for (const request of forkAfter) expect(timesNotified(request, workerTaskId)).toBe(0);
    const mainAfter = mainRequests(requests);
    expect(mainAfter.length).toBeGreaterThan(0);
    for (const request of mainAfter) expect(timesNotified(request, workerTaskId)).toBe(1);
    first.abort();
    await first.flush();

    // Delivered to the main agent in the last process: the fork's record stays unanswered in
    // its transcript, and resuming the fork again still does not hand it over.
    const second = await resume();
    expect(second.notifiedTaskStatus(workerTaskId)).toBe('completed');
    const later = await resumeFork(second, forkId);
    expect(forkRequests(later).length).toBeGreaterThan(0);
    for (const request of forkRequests(later)) expect(timesNotified(request, workerTaskId)).toBe(0);
    for (const request of mainRequests(later)) expect(timesNotified(request, workerTaskId)).toBe(1);
  });
});
