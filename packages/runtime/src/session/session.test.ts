import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { type AgentEvent, DelegateError } from '@delegate/core';
import { resolveAgentPermissionMode } from '../agent-tool/resolve-permission-mode.js';
import { createApiClient } from './model-config.js';
import { DelegateSession } from './session.js';
import { readTranscript } from '../transcripts/read-transcript.js';
import { agentCall, customAgent, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('DelegateSession', () => {
  it('sends no request for run("") when nothing waits for an answer', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'hello back' }) });
    const { session, sim } = current;
    await session.send('hello');
    const requests = sim.journal.entries.length;
    const yielded: unknown[] = [];
    const generator = session.run('');
    let next = await generator.next();
    while (!next.done) {
      yielded.push(next.value);
      next = await generator.next();
    }
    expect(next.value).toEqual({ reason: 'completed', turns: 0 });
    expect(yielded).toEqual([]);
    expect(sim.journal.entries).toHaveLength(requests);
    expect(session.messages.at(-1)?.type).toBe('assistant');
  });

  it('resumes an agent in the same session (after a restart) without writing its history twice', async () => {
    current = await createTestSession({
      policy: rules([
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
      ]),
    });
    const { session } = current;
    const events: AgentEvent[] = [];
    session.events.on((event) => events.push(event));
    await session.send('start', { waitForBackground: true });
    const agentId = events.find((event) => event.type === 'agent.started')!.agentId;
    await session.flush();
    // The process restarts and picks the same session up again.
    const again = await DelegateSession.create({
      cwd: current.cwd,
      client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
      agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
      transcriptDir: current.transcriptDir,
      sessionId: session.transcript!.sessionId,
    });
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
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'slow',
              prompt: 'Wait',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
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

describe('permission modes of sub-agents', () => {
  it('keeps a sub-agent that would ask in dontAsk under a dontAsk parent', () => {
    // No mode in the definition means acceptEdits, which never asks under a dontAsk parent
    // (its questions become denials; see the next test).
    expect(resolveAgentPermissionMode({ parentMode: 'dontAsk', agent: {}, isFork: false })).toBe(
      'acceptEdits',
    );
    expect(resolveAgentPermissionMode({ parentMode: 'dontAsk', agent: {}, isFork: true })).toBe(
      'dontAsk',
    );
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'default' },
        isFork: false,
      }),
    ).toBe('dontAsk');
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'bubble' },
        isFork: false,
      }),
    ).toBe('dontAsk');
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'plan' },
        isFork: false,
      }),
    ).toBe('plan');
    expect(
      resolveAgentPermissionMode({
        parentMode: 'dontAsk',
        agent: { permissionMode: 'acceptEdits' },
        isFork: false,
      }),
    ).toBe('acceptEdits');
  });

  it('never asks the person for a sub-agent of a dontAsk session', async () => {
    const asked: string[] = [];
    current = await createTestSession({
      agents: [
        customAgent(
          '---\nname: writer\ndescription: Writes files\npermissionMode: default\n---\nYou write files.',
        ),
      ],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'write', prompt: 'write it', subagent_type: 'writer' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        {
          match: { agent: 'writer', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'out.txt', content: 'x' } },
          ],
        },
        {
          match: { agent: 'writer', toolResult: 'Write' },
          reply: (request) => resultText(request),
        },
      ]),
      session: {
        permissionMode: 'dontAsk',
        ask: async (request) => {
          asked.push(request.tool.name);
          return { behavior: 'allow' };
        },
      },
    });
    const { text } = await current.session.send('go');
    expect(asked).toEqual([]);
    expect(text).toMatch(/needs approval and no one can be asked here \(permission mode dontAsk\)/);
    expect(existsSync(join(current.cwd, 'out.txt'))).toBe(false);
    await expect(readFile(join(current.cwd, 'out.txt'), 'utf8')).rejects.toThrow();
  });
});

describe('loading agents from disk', () => {
  it('finds user agents under homeDir and project agents under cwd', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const home = join(current.cwd, '..', 'home');
    await mkdir(join(home, '.claude', 'agents'), { recursive: true });
    await mkdir(join(current.cwd, '.claude', 'agents'), { recursive: true });
    await writeFile(
      join(home, '.claude', 'agents', 'mine.md'),
      '---\nname: mine\ndescription: My own helper\n---\nYou help me.',
    );
    await writeFile(
      join(current.cwd, '.claude', 'agents', 'team.md'),
      '---\nname: team\ndescription: The team helper\n---\nYou help the team.',
    );
    const session = await DelegateSession.create({
      cwd: current.cwd,
      homeDir: home,
      client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
      transcriptDir: false,
    });
    const types = session.runtime
      .getAgentDefinitions()
      .activeAgents.map((agent) => agent.agentType);
    expect(types).toEqual(
      expect.arrayContaining(['general-purpose', 'Explore', 'Plan', 'mine', 'team']),
    );
    session.abort();
  });
});
