import { afterEach, describe, expect, it } from 'vitest';
import { type JournalEntry, type SimRequest, rules } from '@delegate/api-sim';
import {
  agentCall,
  agentOf,
  backgroundJobCall,
  mainStartsBackgroundJob,
  customAgent,
  isMain,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

const worker = customAgent('---\nname: worker\ndescription: Works.\ntools: Glob\n---\nYou work.');

/** A gate the simulator's answers wait on. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** A session whose main agent starts one background worker that answers once `release` opens. */
function sessionWithGatedJob(release: { opened: Promise<void> }): Promise<TestSession> {
  return createTestSession({
    agents: [worker],
    policy: rules([
      mainStartsBackgroundJob(),
      { match: { when: isMain }, reply: 'started it' },
      {
        match: { agent: 'worker' },
        reply: async () => {
          await release.opened;
          return 'job done';
        },
      },
    ]),
  });
}

/** How often each task id appears in notifications of a request body. */
function notificationCounts(entry: JournalEntry | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  const text = JSON.stringify(entry?.body ?? {});
  for (const match of text.matchAll(/<task-notification>\\ntask-id: (\S+?)\\n/g))
    counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + 1);
  return counts;
}

const toolResults = (request: SimRequest) => request.toolResults.length > 0;

describe('task notifications, exactly once', () => {
  it('delivers 100 notifications once each when 100 background agents finish together while the parent is mid-turn', async () => {
    const release = gate();
    let arrived = 0;
    const live: { session?: TestSession['session'] } = {};
    current = await createTestSession({
      agents: [worker],
      session: { maxBackgroundAgents: 100 },
      policy: rules([
        {
          match: { when: (request) => isMain(request) && request.turnIndex === 0 },
          reply: Array.from({ length: 100 }, (_, index) =>
            agentCall({
              description: `job ${index}`,
              prompt: `job ${index}`,
              subagent_type: 'worker',
              run_in_background: true,
            }),
          ),
        },
        {
          // The parent's second turn: every worker is waiting; let them all finish at once,
          // and answer only once every one has ended, so all 100 notifications arrive mid-turn.
          match: { when: (request) => isMain(request) && request.turnIndex === 1 },
          reply: async () => {
            await waitUntil(() => arrived === 100, 30_000);
            release.open();
            await waitUntil(() => live.session!.tasks.runningBackgroundCount === 0, 30_000);
            return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
          },
        },
        { match: { when: isMain }, reply: 'all noted' },
        {
          match: { agent: 'worker', when: (request) => !toolResults(request) },
          reply: async () => {
            arrived++;
            await release.opened;
            return 'job done';
          },
        },
      ]),
    });
    live.session = current.session;
    const session = current.session;
    const finishedAt: number[] = [];
    session.events.on((event) => {
      if (event.type === 'agent.completed') finishedAt.push(Date.now());
    });
    const { text } = await session.send('start 100 jobs', { waitForBackground: true });
    await session.flush();

    expect(text).toBe('all noted');
    expect(finishedAt).toHaveLength(100);
    const main = current.sim.journal.filter((entry) => agentOf(entry) === undefined);
    // Every later request carries the whole history: the last one holds each notification once.
    const counts = notificationCounts(main.at(-1));
    const tasks = session.tasks.list();
    expect(tasks).toHaveLength(100);
    expect(counts.size).toBe(100);
    for (const task of tasks) {
      expect(counts.get(task.id), task.id).toBe(1);
      expect(task.notification?.status).toBe('delivered');
    }
    // None arrived before the workers finished: the turn that ran while they finished has none.
    expect(notificationCounts(main[1]).size).toBe(0);
    expect(session.tasks.pendingNotifications).toBe(0);
  }, 60_000);

  for (const moment of ['agent.message', 'agent.completed', 'agent.notification'] as const) {
    it(`delivers exactly one notification when the agent is stopped at ${moment} while it finishes`, async () => {
      current = await createTestSession({
        agents: [worker],
        policy: rules([
          mainStartsBackgroundJob(),
          { match: { when: isMain }, reply: 'noted' },
          { match: { agent: 'worker' }, reply: 'job done' },
        ]),
      });
      const { session, sim } = current;
      let stops = 0;
      session.events.on((event) => {
        if (event.type !== moment || event.agentId === 'main') return;
        for (const task of session.tasks.list()) {
          session.stopTask(task.id);
          stops++;
        }
      });
      await session.send('start', { waitForBackground: true });
      await session.flush();

      expect(stops).toBeGreaterThan(0);
      const [task] = session.tasks.list();
      const counts = notificationCounts(
        sim.journal.filter((entry) => agentOf(entry) === undefined).at(-1),
      );
      expect([...counts.values()]).toEqual([1]);
      expect(counts.get(task!.id)).toBe(1);
      expect(task?.notification?.status).toBe('delivered');
      expect(['completed', 'killed']).toContain(task?.status);
      expect(task?.notification?.text).toContain(`status: ${task?.status}`);
    });
  }

  it('still notifies once when a listener throws while the agent settles', async () => {
    current = await createTestSession({
      agents: [worker],
      session: {
        onEventListenerError: (error) => {
          throw error;
        },
      },
      policy: rules([
        mainStartsBackgroundJob(),
        { match: { when: isMain }, reply: 'noted' },
        { match: { agent: 'worker' }, reply: 'job done' },
      ]),
    });
    const { session, sim } = current;
    session.events.on((event) => {
      if (event.type === 'agent.completed') throw new Error('a broken dashboard');
    });
    await session.send('start', { waitForBackground: true });
    await session.flush();
    const [task] = session.tasks.list();
    const counts = notificationCounts(
      sim.journal.filter((entry) => agentOf(entry) === undefined).at(-1),
    );
    expect(counts.get(task!.id)).toBe(1);
    expect(counts.size).toBe(1);
    expect(task?.notification?.status).toBe('delivered');
  });

  it('delivers exactly one notification into a running fork that started a background agent, mid-turn', async () => {
    // A fork keeps the parent's tools, the Agent tool included (its tool list is part of the
    // cache key), so a sub-agent can be the parent of a background agent.
    const live: { session?: TestSession['session'] } = {};
    const workerTask = () => live.session!.tasks.list().find((task) => task.agentType === 'worker');
    let forkRequests = 0;
    let statusInForkInbox: string | undefined;
    current = await createTestSession({
      agents: [worker],
      session: { forkEnabled: true },
      policy: rules([
        {
          match: { when: (request) => isMain(request) && request.turnIndex === 0 },
          reply: [agentCall({ description: 'split', prompt: 'Split the work' })],
        },
        { match: { when: isMain }, reply: 'all done' },
        { match: { agent: 'worker' }, reply: 'job done' },
        {
          match: { agent: 'fork' },
          reply: async () => {
            forkRequests++;
            if (forkRequests === 1) return [backgroundJobCall('Do the job')];
            if (forkRequests === 2) {
              // The fork is mid-turn while its background agent ends.
              await waitUntil(() => workerTask()?.notification?.status === 'queued', 30_000);
              statusInForkInbox = live.session!.notifiedTaskStatus(workerTask()!.id);
              return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
            }
            return 'fork done';
          },
        },
      ]),
    });
    live.session = current.session;
    const { session, sim } = current;
    const parents = new Map<string, string | undefined>();
    const forkIds: string[] = [];
    session.events.on((event) => {
      if (event.type !== 'agent.started') return;
      parents.set(event.agentId, event.parentAgentId);
      if (event.agentType === 'fork') forkIds.push(event.agentId);
    });
    const { text } = await session.send('start', { waitForBackground: true });
    await session.flush();

    expect(text).toBe('all done');
    const task = workerTask()!;
    expect(forkIds).toHaveLength(1);
    expect(parents.get(task.agentId!)).toBe(forkIds[0]);
    expect(task.notification?.status).toBe('delivered');
    const forkBodies = sim.journal.filter((entry) => agentOf(entry) === 'fork');
    expect(forkBodies).toHaveLength(3);
    expect(notificationCounts(forkBodies[1]).size).toBe(0);
    expect(notificationCounts(forkBodies[2]).get(task.id)).toBe(1);
    expect(notificationCounts(forkBodies[2]).size).toBe(1);
    // It went into the fork's conversation, not the main agent's.
    for (const entry of sim.journal.filter((candidate) => agentOf(candidate) === undefined))
      expect(notificationCounts(entry).size).toBe(0);
    expect(session.tasks.pendingNotifications).toBe(0);
    // Waiting in the fork's inbox, the notification already counted for notifiedTaskStatus.
    expect(statusInForkInbox).toBe('completed');
  });

  it.each(['abort', 'close'] as const)(
    'ends a send waiting for background agents as aborted when the session is stopped (%s)',
    async (how) => {
      const release = gate();
      current = await sessionWithGatedJob(release);
      const { session } = current;
      const sent = session.send('start', { waitForBackground: true });
      // The main agent has answered; only the background agent is still owed.
      await waitUntil(() => JSON.stringify(session.messages.at(-1) ?? {}).includes('started it'));
      expect(session.tasks.runningBackgroundCount).toBe(1);
      if (how === 'abort') session.abort();
      else void session.close();
      const result = await sent;
      release.open();
      expect(result.outcome.reason).toBe('aborted');
      expect(result.text).toBe('started it');
    },
  );

  it('hands the main agent a notification whose carrying request of a sub-agent never got an answer', async () => {
    let forkStep = 0;
    current = await createTestSession({
      // The fork's third request, the one that carries the notification, fails every time.
      sim: {
        faults: [
          {
            kind: 'api_error',
            match: (request) => request.agent === 'fork' && request.turnIndex >= 3,
          },
        ],
      },
      policy: rules([
        {
          match: { agent: 'fork' },
          reply: async () => {
            forkStep += 1;
            if (forkStep === 1)
              return [
                agentCall({
                  description: 'grandchild',
                  prompt: 'gc job',
                  subagent_type: 'worker',
                  run_in_background: true,
                }),
              ];
            // The grandchild ends while this request is in flight: its notification waits in
            // the fork's inbox for the next request.
            await waitUntil(() =>
              current!.session.tasks
                .list()
                .some((task) => task.description === 'grandchild' && task.status === 'completed'),
            );
            return [{ type: 'tool_use', name: 'Glob', input: { pattern: 'nothing-*' } }];
          },
        },
        {
          match: { when: (request: SimRequest) => isMain(request) && request.turnIndex === 0 },
          reply: [
            agentCall({ description: 'fork bg', prompt: 'Directive: go', run_in_background: true }),
          ],
        },
        { match: { when: isMain }, reply: 'ok' },
        { match: { agent: 'worker' }, reply: 'grandchild done' },
      ]),
      agents: [worker],
      session: { forkEnabled: true },
    });
    const { session } = current;
    await session.send('go', { waitForBackground: true });
    const tasks = session.tasks.list();
    const grandchildId = tasks.find((task) => task.description === 'grandchild')?.id ?? '';
    expect(tasks.find((task) => task.agentType === 'fork')?.status).toBe('failed');
    expect(grandchildId).not.toBe('');
    expect(JSON.stringify(session.messages)).toContain(`task-id: ${grandchildId}`);
  });

  it('keeps a notification still queued when the session is aborted with its task, as undeliverable', async () => {
    current = await createTestSession({
      agents: [worker],
      policy: rules([
        mainStartsBackgroundJob(),
        { match: { when: isMain }, reply: 'started it' },
        { match: { agent: 'worker' }, reply: 'job done' },
      ]),
    });
    const { session } = current;
    await session.send('start');
    await waitUntil(() => session.tasks.pendingNotifications === 1);
    expect(session.tasks.list()[0]?.notification?.status).toBe('queued');
    session.abort();
    await session.flush();
    const [task] = session.tasks.list();
    expect(task?.status).toBe('completed');
    expect(task?.notification?.status).toBe('undeliverable');
    expect(task?.notification?.text).toContain('result:\njob done');
    expect(session.tasks.pendingNotifications).toBe(0);
  });

  it('keeps a notification nobody can receive with its task, as undeliverable', async () => {
    const release = gate();
    current = await sessionWithGatedJob(release);
    const { session } = current;
    await session.send('start');
    expect(session.tasks.runningBackgroundCount).toBe(1);
    const events: string[] = [];
    session.events.on((event) => events.push(event.type));
    session.abort();
    release.open();
    await session.flush();
    const [task] = session.tasks.list();
    expect(task?.status).toBe('killed');
    expect(task?.notification?.status).toBe('undeliverable');
    // Nothing was queued, so no event says a notification was.
    expect(events).toContain('agent.failed');
    expect(events).not.toContain('agent.notification');
    expect(task?.notification?.text).toContain(`task-id: ${task?.id}`);
    expect(session.tasks.pendingNotifications).toBe(0);
  });
});
