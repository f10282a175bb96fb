import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import type { AgentEvent } from '@delegate/core';
import {
  agentCall,
  agentOf,
  customAgent,
  isMain,
  lastUserBlocks,
  requestBody,
  resultText,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

/** Main asks for one agent with `input`, then says what the Agent tool returned. */
function oneSpawn(
  input: Record<string, unknown>,
  agentReply: string | ((text: string) => string) = 'report',
) {
  return rules([
    { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'notified' },
    {
      match: { when: isMain, toolResult: false },
      reply: [agentCall({ description: 'job', prompt: 'do the job', ...input })],
    },
    { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
    {
      match: { when: (request) => request.agent !== undefined },
      reply: (request) =>
        typeof agentReply === 'string' ? agentReply : agentReply(request.lastUserText),
    },
  ]);
}

function gitRepository(cwd: string): (...args: string[]) => string {
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  return git;
}

async function commitAll(cwd: string, git: (...args: string[]) => string): Promise<void> {
  await writeFile(join(cwd, 'README.md'), '# repo\n');
  git('add', '.');
  git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');
}

describe('switches that decide where a spawn runs', () => {
  it('coordinatorMode runs every spawn in the background', async () => {
    current = await createTestSession({
      policy: oneSpawn({ subagent_type: 'general-purpose' }),
      session: { coordinatorMode: true },
    });
    const first = await current.session.send('go');
    expect(first.text).toContain('Started general-purpose agent "job" in the background.');
    expect((await current.session.send('', { waitForBackground: true })).text).toBe('notified');
  });

  it('backgroundTasksDisabled runs a run_in_background spawn in the foreground, with no background hint', async () => {
    current = await createTestSession({
      policy: oneSpawn(
        { subagent_type: 'general-purpose', run_in_background: true },
        'foreground report',
      ),
      session: { backgroundTasksDisabled: true, backgroundHintMs: 0 },
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    const { text } = await current.session.send('go');
    expect(text).toContain('foreground report');
    expect(events.find((event) => event.type === 'agent.started')).toMatchObject({
      mode: 'foreground',
    });
    expect(events.some((event) => event.type === 'agent.background_hint')).toBe(false);
  });

  it('DELEGATE_DISABLE_BACKGROUND_TASKS=1 in the environment does the same', async () => {
    current = await createTestSession({
      policy: oneSpawn(
        { subagent_type: 'general-purpose', run_in_background: true },
        'foreground report',
      ),
      session: { env: { DELEGATE_DISABLE_BACKGROUND_TASKS: '1' } },
    });
    expect((await current.session.send('go')).text).toContain('foreground report');
  });

  it('forkForceAsync runs every spawn in the background while forking is on, named types too', async () => {
    current = await createTestSession({
      policy: oneSpawn({ subagent_type: 'general-purpose' }),
      session: { forkEnabled: true, forkForceAsync: true },
    });
    expect((await current.session.send('go')).text).toContain('in the background');
  });

  it('forkForceAsync does nothing while forking is off', async () => {
    current = await createTestSession({
      policy: oneSpawn({ subagent_type: 'general-purpose' }, 'foreground report'),
      session: { forkForceAsync: true },
    });
    expect((await current.session.send('go')).text).toContain('foreground report');
  });
});

describe('what a definition puts into the agent', () => {
  it('leaves project instructions out for omitClaudeMd agents (Explore) and in for others', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'look', prompt: 'look', subagent_type: 'Explore' }),
            agentCall({ description: 'work', prompt: 'work', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { when: isMain }, reply: 'done' },
        { match: {}, reply: 'ok' },
      ]),
      session: {
        userContext: { projectInstructions: 'ALWAYS-RUN-THE-LINTER', other: 'SHARED-NOTE' },
      },
    });
    await current.session.send('go');
    const bodyOf = (agent: string) =>
      JSON.stringify(current!.sim.journal.filter((entry) => agentOf(entry) === agent)[0]!.body);
    expect(bodyOf('Explore')).not.toContain('ALWAYS-RUN-THE-LINTER');
    expect(bodyOf('Explore')).toContain('SHARED-NOTE');
    expect(bodyOf('general-purpose')).toContain('ALWAYS-RUN-THE-LINTER');
  });

  it("opens the agent's first message with its initialPrompt", async () => {
    current = await createTestSession({
      policy: oneSpawn({ subagent_type: 'starter' }),
      agents: [
        customAgent(
          '---\nname: starter\ndescription: starts\ninitialPrompt: Read CONTRIBUTING.md first.\n---\nYou start.',
        ),
      ],
    });
    await current.session.send('go');
    const entry = current.sim.journal.filter((candidate) => agentOf(candidate) === 'starter')[0]!;
    const messages = requestBody(entry).messages;
    expect(messages[0]!.content.at(-1)?.text).toBe('Read CONTRIBUTING.md first.\n\ndo the job');
  });

  it("puts the definition's color on agent.started, and none for general-purpose", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'a', prompt: 'a', subagent_type: 'painter' }),
            agentCall({ description: 'b', prompt: 'b', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { when: isMain }, reply: 'done' },
        { match: {}, reply: 'ok' },
      ]),
      agents: [
        customAgent('---\nname: painter\ndescription: paints\ncolor: purple\n---\nYou paint.'),
      ],
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('go');
    const started = events.flatMap((event) => (event.type === 'agent.started' ? [event] : []));
    expect(started.find((event) => event.agentType === 'painter')?.color).toBe('purple');
    expect(started.find((event) => event.agentType === 'general-purpose')).not.toHaveProperty(
      'color',
    );
  });
});

describe('what a finished run gives back', () => {
  it('returns the partial report of a foreground agent that fails after doing some work', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'job', prompt: 'job', subagent_type: 'general-purpose' }),
          ],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            { type: 'text', text: 'Found the bug in parser.ts line 40.' },
            { type: 'tool_use', name: 'Glob', input: { pattern: '*' } },
          ],
        },
        { match: { agent: 'general-purpose' }, reply: 'never' },
      ]),
      // The second request fails for good (every SDK retry too).
      sim: {
        faults: [{ kind: 'api_error', match: { agent: 'general-purpose', toolResult: 'Glob' } }],
      },
    });
    const { text } = await current.session.send('go');
    expect(text).toMatch(
      /^The agent stopped early \(.*500.*\)\. Its last report:\nFound the bug in parser\.ts line 40\./,
    );
    // The main agent gets it as an error result: the agent did not finish.
    const mainLast = current.sim.journal.filter((entry) => agentOf(entry) === undefined).at(-1)!;
    const result = (lastUserBlocks(mainLast) as Array<{ type: string; is_error?: boolean }>).find(
      (block) => block.type === 'tool_result',
    );
    expect(result?.is_error).toBe(true);
  });

  it('emits agent.cache_evictable with the request id of the last response when an agent ends', async () => {
    current = await createTestSession({ policy: oneSpawn({ subagent_type: 'general-purpose' }) });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('go');
    const last = current.sim.journal
      .filter((entry) => agentOf(entry) === 'general-purpose')
      .at(-1)!;
    const evictable = events.find((event) => event.type === 'agent.cache_evictable');
    expect(evictable).toMatchObject({ lastRequestId: last.requestId });
  });
});

describe('forks and worktrees', () => {
  it('runs a fork in its own worktree and tells it so in its directive', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'fix', prompt: 'Fix the typo', isolation: 'worktree' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        { match: { agent: 'fork', toolResult: 'Write' }, reply: 'Fixed it.' },
        {
          match: { agent: 'fork' },
          reply: [
            {
              type: 'tool_use',
              name: 'Write',
              input: { file_path: 'fixed.txt', content: 'fixed\n' },
            },
          ],
        },
      ]),
      session: { forkEnabled: true, permissionMode: 'acceptEdits' },
    });
    const { cwd } = current;
    const git = gitRepository(cwd);
    await commitAll(cwd, git);
    const { text } = await current.session.send('go');
    const worktreePath = /worktreePath: (\S+)/.exec(text)?.[1];
    expect(worktreePath).toBeDefined();
    expect(await readFile(join(worktreePath!, 'fixed.txt'), 'utf8')).toBe('fixed\n');
    const fork = current.sim.journal.filter((entry) => agentOf(entry) === 'fork')[0]!;
    const directive = lastUserBlocks(fork).at(-1)?.text ?? '';
    expect(directive).toContain('Fix the typo');
    expect(directive).toContain(worktreePath!);
  });

  it('keeps hostile agent types out of git options and out of other folders', async () => {
    const hostile = '--upload-pack=touch PWNED ../../x';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'job',
              prompt: 'job',
              subagent_type: hostile,
              isolation: 'worktree',
            }),
          ],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        {
          match: { agent: 'upload-pack', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Write', input: { file_path: 'change.txt', content: 'x\n' } },
          ],
        },
        { match: { agent: 'upload-pack' }, reply: 'changed' },
      ]),
      agents: [
        { ...customAgent('---\nname: placeholder\ndescription: x\n---\nx'), agentType: hostile },
      ],
    });
    const { cwd, root } = current;
    const git = gitRepository(cwd);
    await commitAll(cwd, git);
    const { text } = await current.session.send('go');
    expect(text).toContain('changed');
    const worktreePath = /worktreePath: (\S+)/.exec(text)?.[1] ?? '';
    const branch = /worktreeBranch: (\S+)/.exec(text)?.[1] ?? '';
    expect(relative(join(root, 'worktrees'), worktreePath)).toMatch(/^agent---upload-pack[^/]*$/);
    expect(branch).toMatch(
      // Cut (the encoded type is over 48 characters) and ended with a hash, then the id.
      /^delegate\/agent---upload-pack%3Dtouch%20(?:%[0-9A-F]{2})*\+[0-9a-f]{16}-[0-9a-f]{12}$/,
    );
    expect(git('branch', '--list', branch)).toContain(branch);
    expect(() => git('check-ref-format', '--branch', branch)).not.toThrow();
    expect(await readFile(join(worktreePath, 'change.txt'), 'utf8')).toBe('x\n');
    expect(execFileSync('find', [root, '-name', 'PWNED'], { encoding: 'utf8' }).trim()).toBe('');
  });

  it('runs an agent whose type is not ASCII (an HTTP header holds bytes only)', async () => {
    const type = 'レビュー係 🔍';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'review', prompt: 'review', subagent_type: type })],
        },
        { match: { when: isMain }, reply: (request) => `main got: ${resultText(request)}` },
        { match: {}, reply: 'reviewed' },
      ]),
      agents: [
        { ...customAgent('---\nname: placeholder\ndescription: x\n---\nx'), agentType: type },
      ],
    });
    const { text } = await current.session.send('go');
    expect(text).toContain('reviewed');
    // Percent-encoded UTF-8 in the header, so a proxy can still tell the agent apart.
    expect(current.sim.journal.entries.map(agentOf)).toContain(
      '%E3%83%AC%E3%83%93%E3%83%A5%E3%83%BC%E4%BF%82 %F0%9F%94%8D',
    );
  });
});

describe('effort', () => {
  it("turns a numeric effort in the definition into the agent's thinking budget", async () => {
    const thinker = customAgent(
      '---\nname: thinker\ndescription: Thinks hard\neffort: 4096\n---\nYou think.',
    );
    current = await createTestSession({
      agents: [thinker],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'think', subagent_type: 'thinker' })],
        },
        { match: { agent: 'thinker' }, reply: 'thought' },
        { match: { when: isMain }, reply: 'done' },
      ]),
    });
    await current.session.send('go');
    const request = current.sim.journal.filter(
      (entry) => entry.headers['x-delegate-agent'] === 'thinker',
    )[0]!;
    expect((request.body as { thinking?: unknown }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 4096,
    });
  });
});
