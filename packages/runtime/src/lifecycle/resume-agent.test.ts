import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Rule, rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { type AgentEvent, type PermissionDecision, DelegateError } from '@delegate/core';
import type { InFlightToolCalls } from './settle-in-flight-calls.js';
import { createApiClient } from '../session/model-config.js';
import { DelegateSession } from '../session/session.js';
import type { DelegateSessionOptions } from '../session/session-options.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import {
  agentCall,
  agentOf,
  isMain,
  lastUserBlocks,
  readThenWriteCalls,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** The main agent's first answer: one background agent of `type`. */
function launchInBackground(type: string, description: string, prompt: string): Rule {
  return {
    match: { when: isMain, toolResult: false },
    reply: [agentCall({ description, prompt, subagent_type: type, run_in_background: true })],
  };
}

/** A new session over the same transcript folder and simulator: the process restarted. */
function reopen(
  test: TestSession,
  sessionId: string,
  options: Partial<DelegateSessionOptions> = {},
): Promise<DelegateSession> {
  return DelegateSession.create({
    cwd: test.cwd,
    client: createApiClient({ apiKey: 'k', baseURL: test.sim.url }),
    agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
    transcriptDir: test.transcriptDir,
    sessionId,
    ...options,
  });
}

/**
 * A session whose main agent starts one background `general-purpose` job ("Do the job") and
 * waits for it; `replies` answer the job. Returns the job's agent id once it has finished.
 */
async function finishedBackgroundJob(
  replies: Rule[],
): Promise<{ session: DelegateSession; agentId: string }> {
  current = await createTestSession({
    policy: rules([
      { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
      launchInBackground('general-purpose', 'job', 'Do the job'),
      { match: { when: isMain }, reply: 'ok' },
      ...replies,
    ]),
  });
  const { session } = current;
  const events: AgentEvent[] = [];
  session.events.on((event) => events.push(event));
  await session.send('start', { waitForBackground: true });
  const agentId = events.find((event) => event.type === 'agent.started')!.agentId;
  await session.flush();
  return { session, agentId };
}

describe('resuming in the same session', () => {
  it('resumes an agent in the same session (after a restart) without writing its history twice', async () => {
    const { session, agentId } = await finishedBackgroundJob([
      { match: { agent: 'general-purpose', lastUserText: 'And the rest' }, reply: 'Rest done.' },
      { match: { agent: 'general-purpose' }, reply: 'Job done.' },
    ]);
    // The process restarts and picks the same session up again.
    const again = await reopen(current!, session.transcript!.sessionId);
    await again.resumeAgent({ agentId, message: 'And the rest' });
    await again.send('', { waitForBackground: true });
    await again.flush();
    again.abort();

    const entries = await readTranscript(session.transcript!.agentPath(agentId));
    const uuids = entries.map((entry) => entry.uuid);
    expect(new Set(uuids).size).toBe(uuids.length);
    expect(entries.filter((entry) => JSON.stringify(entry).includes('Do the job'))).toHaveLength(1);
    // One unbroken chain: each line points at the one before it.
    entries.forEach((entry, index) =>
      expect(entry.parentUuid).toBe(index === 0 ? null : entries[index - 1]!.uuid),
    );
    expect(JSON.stringify(entries.at(-1))).toContain('Rest done.');
  });

  it('refuses to resume an agent that is still running in the session', async () => {
    current = await createTestSession({
      policy: rules([
        launchInBackground('general-purpose', 'slow', 'Wait'),
        { match: { when: isMain }, reply: 'ok' },
        { match: { agent: 'general-purpose' }, reply: 'late' },
      ]),
      sim: {
        faults: [{ kind: 'slow_first_byte', delayMs: 5_000, match: { agent: 'general-purpose' } }],
      },
    });
    const { session } = current;
    const events: AgentEvent[] = [];
    session.events.on((event) => events.push(event));
    await session.send('start');
    expect(await waitUntil(() => events.some((event) => event.type === 'agent.started'))).toBe(
      true,
    );
    const agentId = events.find((event) => event.type === 'agent.started')!.agentId;
    const error = await session
      .resumeAgent({ agentId, message: 'again' })
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(/still running .* SendMessage/);
  });
});

describe('two resumes of one agent at once', () => {
  it('runs the agent once: the second call is refused while the first restores it', async () => {
    const { session, agentId } = await finishedBackgroundJob([
      { match: { agent: 'general-purpose' }, reply: 'Done.' },
    ]);

    const results = await Promise.allSettled([
      session.resumeAgent({ agentId, message: 'msg A' }),
      session.resumeAgent({ agentId, message: 'msg B' }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    const refusal = (results[1] as PromiseRejectedResult).reason as Error;
    expect(DelegateError.hasCode(refusal, 'INVALID_ARGUMENT')).toBe(true);
    expect(refusal.message).toMatch(/still running .* SendMessage/);
    await session.send('', { waitForBackground: true });
    await session.flush();
    const requests = current!.sim.journal.entries.filter(
      (entry) => agentOf(entry) === 'general-purpose',
    );
    // The first run, then one resumed run that got msg A only.
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]!.body)).toContain('msg A');
    expect(JSON.stringify(requests[1]!.body)).not.toContain('msg B');

    // Once that run ended, the agent can be resumed again.
    await expect(session.resumeAgent({ agentId, message: 'msg C' })).resolves.toMatchObject({
      status: 'async_launched',
    });
    await session.send('', { waitForBackground: true });

    // A closed session runs no more agents, and says so instead of launching one to kill it.
    await session.close();
    const closed = await session
      .resumeAgent({ agentId, message: 'msg D' })
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(closed, 'ABORTED')).toBe(true);
    expect((closed as Error).message).toMatch(/the session was closed; it runs no more agents/);
  });
});

describe('resuming a background agent from its transcript', () => {
  it('restores the conversation in a new session and finishes the task', async () => {
    const marker = `${6000 + (process.pid % 1000)}.${Date.now() % 1000}1`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `resumed result: ${request.lastUserText}`,
        },
        launchInBackground('general-purpose', 'long job', 'Do the long job'),
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'started' },
        {
          match: { agent: 'general-purpose', lastUserText: 'Continue the task' },
          reply: (request) =>
            `Finished the long job after resuming (history had ${request.messages.length} messages).`,
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${marker}` } }],
        },
      ]),
      session: { permissionMode: 'bypassPermissions', sessionId: 'first-session' },
    });
    const first = current.session;
    const events: AgentEvent[] = [];
    first.events.on((event) => events.push(event));
    await first.send('start the long job');
    const started = events.find((event) => event.type === 'agent.started');
    expect(started).toBeDefined();
    expect(await waitUntil(() => first.tasks.list()[0]?.lastActivity === 'called Bash')).toBe(true);
    // The first session dies mid-run (the Bash call never returns).
    first.abort();
    await first.flush();

    const second = await reopen(current, 'second-session', {
      permissionMode: 'bypassPermissions',
    });
    const launched = await second.resumeAgent({
      agentId: started!.agentId,
      sessionId: 'first-session',
    });
    expect(launched.status).toBe('async_launched');
    const { text } = await second.send('', { waitForBackground: true });
    // The restored history: the prompt, the Bash call and its (repaired) result, and the note.
    expect(text).toContain('Finished the long job after resuming (history had 3 messages)');
    const resumedRequest = current.sim.journal
      .filter((entry) => entry.headers['x-delegate-agent'] === 'general-purpose')
      .at(-1)!;
    expect(JSON.stringify(resumedRequest.body)).toContain('Do the long job');
    await second.flush();
    second.abort();
  });

  it('names the missing file when there is nothing to resume', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    await expect(
      current.session.resumeAgent({ agentId: 'anope', sessionId: 'nowhere' }),
    ).rejects.toThrow(/No metadata for agent anope at .*nowhere/);
  });
});

describe('resuming a one-shot built-in (Explore)', () => {
  const exploreInBackground = rules([
    { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
    launchInBackground('Explore', 'look', 'Find the config'),
    { match: { when: isMain }, reply: 'ok' },
    { match: { agent: 'Explore' }, reply: 'found it in config.ts' },
  ]);

  /** A session whose background Explore agent gave its report; and that agent's id. */
  async function exploreThatReported(): Promise<{
    test: TestSession;
    session: DelegateSession;
    agentId: string;
  }> {
    const test = await createTestSession({ policy: exploreInBackground });
    current = test;
    const { session } = test;
    const events: AgentEvent[] = [];
    session.events.on((event) => events.push(event));
    await session.send('look around', { waitForBackground: true });
    await session.flush();
    const agentId = events.find((event) => event.type === 'agent.started')!.agentId;
    return { test, session, agentId };
  }

  it('refuses a follow-up message to one that gave its report, without running the task again', async () => {
    const { test, session, agentId } = await exploreThatReported();
    // In the session it reported to, there is nothing to resume either.
    await expect(session.resumeAgent({ agentId })).rejects.toThrow(
      /already gave its report in this session; there is nothing to resume/,
    );
    const again = await reopen(test, session.transcript!.sessionId);
    const error = await again
      .resumeAgent({ agentId, message: 'and the tests?' })
      .catch((caught: unknown) => caught);
    again.abort();
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(
      /one-shot Explore agent that already gave its report\. Start a new Explore agent/,
    );
    expect(test.sim.journal.filter((entry) => agentOf(entry) === 'Explore')).toHaveLength(1);
  });

  it('settles one that gave its report on that report when resumed without a message, with no request', async () => {
    const { test, session, agentId } = await exploreThatReported();
    // Its notification never reached the main agent (the process died first): a host resumes it.
    const before = test.sim.journal.entries.length;
    const again = await reopen(test, session.transcript!.sessionId);
    const againEvents: AgentEvent[] = [];
    again.events.on((event) => againEvents.push(event));
    const launched = await again.resumeAgent({ agentId });
    expect(launched.status).toBe('async_launched');
    const { text } = await again.send('', { waitForBackground: true });
    await again.flush();
    again.abort();
    expect(text).toBe('noted');
    // The second session made one request, the main agent's, told of the completed report.
    const later = test.sim.journal.entries.slice(before);
    expect(later).toHaveLength(1);
    expect(agentOf(later[0]!)).toBeUndefined();
    expect(JSON.stringify(later[0]!.body)).toMatch(
      /<task-notification>.*status: completed.*result:\\nfound it in config\.ts/s,
    );
    // No request was made: the settled run counts nothing spent (the notification above
    // still describes the run that made the report).
    expect(againEvents.find((event) => event.type === 'agent.completed')).toMatchObject({
      usage: { input_tokens: 0, output_tokens: 0 },
      costUsd: 0,
      toolUseCount: 0,
      agentId,
    });
    // Its transcript gained nothing: the same file, one report.
    const lines = await readTranscript(session.transcript!.agentPath(agentId));
    expect(
      lines.filter((line) => JSON.stringify(line).includes('found it in config.ts')),
    ).toHaveLength(1);
  });

  it('resumes one that was cut off before its report', async () => {
    current = await createTestSession({
      policy: exploreInBackground,
      sim: {
        faults: [
          { kind: 'slow_first_byte', delayMs: 1_500, times: 1, match: { agent: 'Explore' } },
        ],
      },
    });
    const first = current.session;
    const events: AgentEvent[] = [];
    first.events.on((event) => events.push(event));
    await first.send('look around');
    expect(await waitUntil(() => events.some((event) => event.type === 'agent.started'))).toBe(
      true,
    );
    const agentId = events.find((event) => event.type === 'agent.started')!.agentId;
    first.abort();
    await first.flush();
    // Its transcript says it was stopped, where it stopped.
    const stopped = await readTranscript(first.transcript!.agentPath(agentId));
    expect(stopped.at(-1)).toMatchObject({ type: 'system', subtype: 'run_ended' });
    expect((stopped.at(-1) as { content: string }).content).toMatch(/^The run was stopped/);

    const second = await reopen(current, first.transcript!.sessionId);
    const launched = await second.resumeAgent({ agentId });
    expect(launched.status).toBe('async_launched');
    await second.send('', { waitForBackground: true });
    await second.flush();
    second.abort();
    const last = await readTranscript(first.transcript!.agentPath(agentId));
    expect(JSON.stringify(last.at(-1))).toContain('found it in config.ts');
    // The line is the transcript's, not the conversation's: no request carried it.
    for (const entry of current.sim.journal.filter((item) => agentOf(item) === 'Explore'))
      expect(JSON.stringify(entry.body)).not.toContain('The run was stopped');
  });
});

describe('resuming an agent whose tool calls were in flight', () => {
  /**
   * A first session whose foreground sub-agent answers with a Read and a Write in one
   * response and is cut off while the Write waits for approval (its results never reach the
   * transcript); the file it reads then changes, and a second session resumes the agent.
   * Returns the tool results of the resumed agent's first request.
   */
  async function resumeCutOffAgent(
    inFlightToolCalls: InFlightToolCalls | undefined,
    secondSession: Partial<DelegateSessionOptions> = {},
  ): Promise<{ results: Array<{ content?: unknown; is_error?: boolean }>; written: boolean }> {
    let asked = false;
    let answer: ((decision: PermissionDecision) => void) | undefined;
    let cwd = '';
    current = await createTestSession({
      policy: rules([
        { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'edit',
              prompt: 'Copy notes',
              subagent_type: 'general-purpose',
            }),
          ],
        },
        { match: { when: isMain }, reply: 'ok' },
        {
          match: { agent: 'general-purpose', lastUserText: 'Continue the task' },
          reply: 'Copied.',
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: () => readThenWriteCalls(cwd),
        },
      ]),
      session: {
        sessionId: 'first-session',
        askRules: ['Write'],
        ask: () => {
          asked = true;
          return new Promise((resolve) => (answer = resolve));
        },
      },
    });
    cwd = current.cwd;
    await writeFile(join(cwd, 'notes.txt'), 'first version');
    const first = current.session;
    const events: AgentEvent[] = [];
    first.events.on((event) => events.push(event));
    const turn = first.send('copy the notes');
    expect(await waitUntil(() => asked)).toBe(true);
    const agentId = events.find((event) => event.type === 'agent.started')!.agentId;
    await first.flush();
    // The first session is gone as far as the transcript knows; the file changed since.
    await writeFile(join(current.cwd, 'notes.txt'), 'second version');

    const second = await reopen(current, 'second-session', secondSession);
    await second.resumeAgent({
      agentId,
      sessionId: 'first-session',
      ...(inFlightToolCalls ? { inFlightToolCalls } : {}),
    });
    await second.send('', { waitForBackground: true });
    await second.flush();
    second.abort();
    // The resumed agent's first request (the first session's agent is still held).
    const resumed = current.sim.journal
      .filter((entry) => agentOf(entry) === 'general-purpose')
      .at(-1)!;
    answer?.({ behavior: 'deny', message: 'test over' });
    await turn;
    const written = await readFile(join(current.cwd, 'copy.txt'), 'utf8').then(
      () => true,
      () => false,
    );
    return {
      results: lastUserBlocks(resumed).filter((block) => block.type === 'tool_result'),
      written,
    };
  }

  it('with rerun-read-only, runs the Read again and tells the agent the Write was interrupted', async () => {
    // The resuming session may write: the Write stays undone because it is not run again.
    const { results, written } = await resumeCutOffAgent('rerun-read-only', {
      allowRules: ['Write'],
    });
    expect(results).toHaveLength(2);
    expect(JSON.stringify(results[0]!.content)).toContain('second version');
    expect(results[0]!.is_error).not.toBe(true);
    expect(JSON.stringify(results[1]!.content)).toContain(
      'Interrupted: the run stopped before this call finished',
    );
    expect(results[1]!.is_error).toBe(true);
    expect(written).toBe(false);
  });

  it("runs the Read again under the resuming session's permission rules", async () => {
    const { results } = await resumeCutOffAgent('rerun-read-only', { denyRules: ['Read'] });
    expect(results).toHaveLength(2);
    expect(results[0]!.is_error).toBe(true);
    expect(JSON.stringify(results[0]!.content)).toMatch(/denied|deny/i);
    expect(JSON.stringify(results[0]!.content)).not.toContain('version');
  });

  it('by default, runs nothing again: both calls get the interrupted result', async () => {
    const { results, written } = await resumeCutOffAgent(undefined, { allowRules: ['Write'] });
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(JSON.stringify(result.content)).toContain(
        'Interrupted: the run stopped before this call finished',
      );
      expect(JSON.stringify(result.content)).not.toContain('version');
    }
    expect(written).toBe(false);
  });

  it('refuses an unknown inFlightToolCalls mode, naming the option', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    await expect(
      current.session.resumeAgent({
        agentId: 'a1',
        inFlightToolCalls: 'rerun-all' as InFlightToolCalls,
      }),
    ).rejects.toThrow(
      /inFlightToolCalls must be 'interrupt' or 'rerun-read-only', got "rerun-all"/,
    );
  });
});
