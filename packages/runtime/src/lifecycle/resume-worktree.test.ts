import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getBuiltInAgents } from '@delegate/agent-defs';
import { type AgentEvent, DelegateError } from '@delegate/core';
import { agentCall, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { createApiClient } from '../session/model-config.js';
import { DelegateSession } from '../session/session.js';
import { isCompacted } from './agent-directory.js';

let current: TestSession | undefined;
const extra: DelegateSession[] = [];

afterEach(async () => {
  for (const session of extra.splice(0)) await session.close();
  await current?.cleanup();
  current = undefined;
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

function commitAll(cwd: string, message: string): void {
  git(cwd, 'add', '.');
  git(cwd, '-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', message);
}

/** The linked worktrees of the repository at `cwd` (its main checkout left out). */
function linkedWorktrees(cwd: string): string[] {
  return git(cwd, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length))
    .slice(1);
}

/**
 * A session on a fresh repository whose main agent starts one foreground worktree agent
 * (`writer`) that writes `first.txt`; asked again ("second step", by SendMessage or a
 * resume), it writes `second.txt` where it works.
 */
async function worktreeWriter(
  session: Parameters<typeof createTestSession>[0]['session'] = {},
): Promise<{ agentId: string; worktreePath: string }> {
  current = await createTestSession({
    policy: rules([
      { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
      {
        match: { when: isMain, lastUserText: 'start', toolResult: false },
        reply: [
          agentCall({
            description: 'write',
            prompt: 'write first',
            subagent_type: 'general-purpose',
            isolation: 'worktree',
            name: 'writer',
          }),
        ],
      },
      {
        match: { when: isMain, lastUserText: 'again', toolResult: false },
        reply: [
          {
            type: 'tool_use',
            name: 'SendMessage',
            input: { to: 'writer', message: 'second step' },
          },
        ],
      },
      { match: { when: isMain, toolResult: true }, reply: (request) => resultText(request) },
      {
        match: { agent: 'general-purpose', lastUserText: 'second step', toolResult: false },
        reply: [
          { type: 'tool_use', name: 'Write', input: { file_path: 'second.txt', content: '2\n' } },
        ],
      },
      {
        match: { agent: 'general-purpose', toolResult: false },
        reply: [
          { type: 'tool_use', name: 'Write', input: { file_path: 'first.txt', content: '1\n' } },
        ],
      },
      { match: { agent: 'general-purpose' }, reply: 'Written.' },
    ]),
    session: { permissionMode: 'acceptEdits', ...session },
  });
  const { cwd } = current;
  git(cwd, 'init', '-q', '-b', 'main');
  await writeFile(join(cwd, 'README.md'), '# repo\n');
  commitAll(cwd, 'init');
  const started = await current.session.send('start');
  const agentId = /agentId: (\S+)/.exec(started.text)?.[1];
  const worktreePath = /worktreePath: (\S+)/.exec(started.text)?.[1];
  expect(agentId).toBeDefined();
  expect(worktreePath).toBeDefined();
  expect(existsSync(join(worktreePath!, 'first.txt'))).toBe(true);
  await current.session.flush();
  return { agentId: agentId!, worktreePath: worktreePath! };
}

/** The same session, picked up again by a new process. */
async function reopen(
  test: TestSession,
): Promise<{ session: DelegateSession; events: AgentEvent[] }> {
  const session = await DelegateSession.create({
    cwd: test.cwd,
    client: createApiClient({ apiKey: 'k', baseURL: test.sim.url }),
    agentDefinitions: { activeAgents: getBuiltInAgents(), allAgents: getBuiltInAgents() },
    transcriptDir: test.transcriptDir,
    homeDir: test.homeDir,
    worktreeRoot: join(test.root, 'worktrees'),
    sessionId: test.session.transcript!.sessionId,
    resume: true,
    permissionMode: 'acceptEdits',
  });
  extra.push(session);
  const events: AgentEvent[] = [];
  session.events.on((event) => events.push(event));
  return { session, events };
}

async function resumeSecondStep(session: DelegateSession, agentId: string): Promise<void> {
  await session.resumeAgent({ agentId, message: 'second step' });
  await session.send('', { waitForBackground: true });
  await session.flush();
}

describe('a resumed worktree agent', () => {
  it('goes on in its kept worktree in a new session, never in the main checkout', async () => {
    const { agentId, worktreePath } = await worktreeWriter();
    const { session } = await reopen(current!);
    await resumeSecondStep(session, agentId);
    expect(await readFile(join(worktreePath, 'second.txt'), 'utf8')).toBe('2\n');
    expect(existsSync(join(current!.cwd, 'second.txt'))).toBe(false);
    expect(git(current!.cwd, 'status', '--porcelain')).toBe('');
    expect(linkedWorktrees(current!.cwd)).toEqual([worktreePath]);
    // Its notification says where the work is.
    const task = session.tasks.list().find((entry) => entry.agentId === agentId);
    expect(task?.notification?.text).toContain(worktreePath);
  });

  it('goes on in its kept worktree when resumed in the same session', async () => {
    const { agentId, worktreePath } = await worktreeWriter();
    await resumeSecondStep(current!.session, agentId);
    expect(existsSync(join(worktreePath, 'second.txt'))).toBe(true);
    expect(existsSync(join(current!.cwd, 'second.txt'))).toBe(false);
  });

  it('goes on in its kept worktree when SendMessage reaches it after it was compacted', async () => {
    const { agentId, worktreePath } = await worktreeWriter({ maxRetainedAgents: 0 });
    expect(isCompacted(current!.session.runtime.agents.get(agentId)!)).toBe(true);
    await current!.session.send('again', { waitForBackground: true });
    await current!.session.flush();
    expect(existsSync(join(worktreePath, 'second.txt'))).toBe(true);
    expect(existsSync(join(current!.cwd, 'second.txt'))).toBe(false);
    expect(git(current!.cwd, 'status', '--porcelain')).toBe('');
  });

  it('whose worktree is gone works in a fresh worktree of its repository and is told so', async () => {
    const { agentId, worktreePath } = await worktreeWriter();
    const branch = git(worktreePath, 'branch', '--show-current');
    git(current!.cwd, 'worktree', 'remove', '--force', worktreePath);
    git(current!.cwd, 'branch', '-D', branch);
    const { session } = await reopen(current!);
    await resumeSecondStep(session, agentId);
    const [fresh, ...others] = linkedWorktrees(current!.cwd);
    expect(others).toEqual([]);
    expect(fresh).not.toBe(worktreePath);
    expect(existsSync(join(fresh!, 'second.txt'))).toBe(true);
    expect(existsSync(join(fresh!, 'first.txt'))).toBe(false);
    expect(existsSync(join(current!.cwd, 'second.txt'))).toBe(false);
    const told = current!.sim.journal.entries.some((entry) =>
      JSON.stringify(entry.body).includes(`previous worktree ${worktreePath} is gone`),
    );
    expect(told).toBe(true);
  });

  it('does not take a worktree path its metadata was edited to name (the main checkout)', async () => {
    const { agentId } = await worktreeWriter();
    const test = current!;
    const metaPath = test.session.transcript!.agentMetaPath(agentId);
    const meta = JSON.parse(await readFile(metaPath, 'utf8')) as Record<string, unknown>;
    const worktree = meta['worktree'] as Record<string, unknown>;
    await writeFile(
      metaPath,
      JSON.stringify({
        ...meta,
        cwd: test.cwd,
        worktree: { ...worktree, worktreePath: test.cwd, cwd: test.cwd },
      }),
    );
    const { session, events } = await reopen(test);
    await resumeSecondStep(session, agentId);
    expect(existsSync(join(test.cwd, 'second.txt'))).toBe(false);
    expect(git(test.cwd, 'status', '--porcelain')).toBe('');
    const warning = events.find(
      (event) => event.type === 'agent.warning' && event.code === 'WORKTREE_REPLACED',
    );
    expect(warning).toBeDefined();
    expect(linkedWorktrees(test.cwd).some((path) => existsSync(join(path, 'second.txt')))).toBe(
      true,
    );
  });

  it('is refused when its metadata names a repository outside the session', async () => {
    const { agentId } = await worktreeWriter();
    const test = current!;
    const elsewhere = join(test.root, 'elsewhere');
    await mkdir(elsewhere);
    git(elsewhere, 'init', '-q', '-b', 'main');
    await writeFile(join(elsewhere, 'x.txt'), 'x\n');
    commitAll(elsewhere, 'x');
    const metaPath = test.session.transcript!.agentMetaPath(agentId);
    const meta = JSON.parse(await readFile(metaPath, 'utf8')) as Record<string, unknown>;
    const worktree = meta['worktree'] as Record<string, unknown>;
    await writeFile(
      metaPath,
      JSON.stringify({ ...meta, worktree: { ...worktree, gitRoot: elsewhere } }),
    );
    const { session } = await reopen(test);
    const error = await session
      .resumeAgent({ agentId, message: 'second step' })
      .catch((caught: unknown) => caught);
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toContain(
      `the folder its worktree was made from (${elsewhere})`,
    );
    expect(git(elsewhere, 'worktree', 'list').split('\n')).toHaveLength(1);
  });
});
