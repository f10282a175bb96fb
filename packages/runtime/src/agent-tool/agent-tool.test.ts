import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateBlockTokens, rules } from '@delegate/api-sim';
import type { AgentEvent } from '@delegate/core';
import { fingerprintRequest, diagnoseCacheBreak } from '@delegate/fork-cache';
import { readTranscript } from '../transcripts/read-transcript.js';
import {
  agentOf,
  customAgent,
  isMain,
  lastUserBlocks,
  requestBody,
  resultText,
  agentCall,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('Agent tool', () => {
  it('runs Explore in the foreground with read-only tools and returns its report', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'find config',
              prompt: 'Where is the config loaded?',
              subagent_type: 'Explore',
            }),
          ],
        },
        {
          match: { agent: 'Explore', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Grep', input: { pattern: 'config' } }],
        },
        {
          match: { agent: 'Explore', toolResult: 'Grep' },
          reply: 'The config is loaded in src/config.ts.',
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `Explore said: ${resultText(request)}`,
        },
      ]),
    });
    await writeFile(join(current.cwd, 'config.ts'), 'export const config = {};\n');
    const { text } = await current.session.send('Find the config loader');
    expect(text).toBe('Explore said: The config is loaded in src/config.ts.');
    const exploreRequests = current.sim.journal.filter((entry) => agentOf(entry) === 'Explore');
    expect(exploreRequests.length).toBe(2);
    const toolNames = requestBody(exploreRequests[0]!)
      .tools!.map((tool) => tool.name)
      .sort();
    expect(toolNames).toEqual(['Bash', 'Glob', 'Grep', 'Read']);
    // Explore is a one-shot built-in: its report comes back without an id or usage trailer.
    const mainAfter = current.sim.journal.filter((entry) => agentOf(entry) === undefined).at(-1)!;
    expect(JSON.stringify(lastUserBlocks(mainAfter))).not.toContain('agentId:');
  });

  it('forks three workers whose requests share the prefix and read it from the cache', async () => {
    const directives = ['Audit the parser', 'Audit the loader', 'Audit the printer'];
    current = await createTestSession({
      policy: rules([
        {
          match: { forkDirective: true },
          reply: (request) => `Scope: ${request.forkDirective}\nResult: nothing wrong.`,
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            { type: 'text', text: 'Forking three audits.' },
            ...directives.map((prompt) => agentCall({ description: prompt, prompt })),
          ],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'All three audits are back.' },
      ]),
      session: { forkEnabled: true },
    });
    const { text } = await current.session.send('Audit the three modules');
    expect(text).toBe('All three audits are back.');
    const forks = current.sim.journal.filter(
      (entry) =>
        entry.status === 200 && JSON.stringify(lastUserBlocks(entry)).includes('fork-worker-rules'),
    );
    expect(forks).toHaveLength(3);
    // Identical up to the directive block: same tools, system, model, thinking and history.
    const fingerprints = forks.map((entry) => fingerprintRequest(entry.body as never));
    for (const other of fingerprints.slice(1)) {
      const diagnosis = diagnoseCacheBreak(fingerprints[0]!, other);
      expect(diagnosis.identical).toBe(false);
      if (!diagnosis.identical) {
        const lastMessage = requestBody(forks[0]!).messages.length - 1;
        expect(diagnosis.firstDifference).toMatchObject({
          part: 'message',
          messageIndex: lastMessage,
          blockIndex: lastUserBlocks(forks[0]!).length - 1,
        });
      }
    }
    // The second and third children read (nearly) all of the shared prefix from the cache.
    for (const entry of forks.slice(1)) {
      const usage = entry.usage!;
      const total =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
      const directive = lastUserBlocks(entry).at(-1)!;
      const shared = total - estimateBlockTokens(directive as never);
      expect(usage.cache_read_input_tokens / shared).toBeGreaterThanOrEqual(0.99);
    }
  });

  it('notifies the parent when a background agent finishes, and TaskOutput returns its result', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false, lastUserText: 'Count the files' },
          reply: [
            agentCall({
              description: 'count files',
              prompt: 'Count the files',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 0.3; ls | wc -l' } }],
        },
        {
          match: { agent: 'general-purpose', toolResult: 'Bash' },
          reply: (request) => `There are ${resultText(request).trim().split('\n')[0]} files.`,
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => {
            const taskId = /taskId: (\S+)/.exec(resultText(request))?.[1] ?? 'missing';
            return [
              { type: 'tool_use', name: 'TaskOutput', input: { task_id: taskId, timeout: 20_000 } },
            ];
          },
        },
        {
          match: { when: isMain, toolResult: 'TaskOutput' },
          reply: (request) => `TaskOutput: ${resultText(request)}`,
        },
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: 'Noted the notification.',
        },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    await writeFile(join(current.cwd, 'a.txt'), 'a');
    const { text } = await current.session.send('Count the files');
    expect(text).toContain('status: completed');
    expect(text).toContain('There are 1 files.');
    // The notification was queued when the agent ended and rides along in the parent's next request.
    const mainRequests = current.sim.journal.filter((entry) => agentOf(entry) === undefined);
    const last = mainRequests.at(-1)!;
    const lastText = JSON.stringify(requestBody(last).messages.at(-1));
    expect(lastText).toContain('<task-notification>');
    expect(lastText).toContain('status: completed');
    expect(lastText).toContain('There are 1 files.');
    const [task] = current.session.tasks.list();
    expect(task).toMatchObject({
      status: 'completed',
      type: 'local_agent',
      result: 'There are 1 files.',
    });
  });

  it("stops every child and its shell when the parent aborts, but one child's stop leaves the parent running", async () => {
    const marker = `${4000 + (process.pid % 1000)}.${Date.now() % 1000}3`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: Array.from({ length: 5 }, (_, index) =>
            agentCall({
              description: `sleeper ${index}`,
              prompt: `sleep ${index}`,
              subagent_type: 'general-purpose',
            }),
          ),
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${marker}` } }],
        },
        { match: { agent: 'general-purpose' }, reply: 'woke up' },
        { match: { when: isMain }, reply: 'main finished' },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    const count = (): number => {
      try {
        return execFileSync('pgrep', ['-f', `sleep ${marker}`], { encoding: 'utf8' })
          .trim()
          .split('\n')
          .filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    const run = current.session.send('Start five sleepers');
    expect(await waitUntil(() => count() === 5)).toBe(true);
    current.session.abort();
    await run;
    expect(await waitUntil(() => count() === 0, 5_000)).toBe(true);
    expect(current.session.tasks.list().filter((task) => task.status === 'killed')).toHaveLength(5);
  });

  it('keeps the parent running when one child is stopped', async () => {
    const marker = `${5000 + (process.pid % 1000)}.${Date.now() % 1000}7`;
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: 'the sleeper was stopped, carrying on',
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'sleeper',
              prompt: 'sleep',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${marker}` } }],
        },
        { match: { agent: 'general-purpose' }, reply: 'woke up' },
        { match: { when: isMain, toolResult: 'Agent' }, reply: 'started it' },
      ]),
      session: { permissionMode: 'bypassPermissions' },
    });
    await current.session.send('start one');
    const [task] = current.session.tasks.list();
    expect(
      await waitUntil(() => current!.session.tasks.get(task!.id)?.lastActivity === 'called Bash'),
    ).toBe(true);
    current.session.stopTask(task!.id);
    const { text } = await current.session.send('', { waitForBackground: true });
    expect(text).toBe('the sleeper was stopped, carrying on');
    expect(current.session.context.abortController.signal.aborted).toBe(false);
    expect(current.session.tasks.get(task!.id)?.status).toBe('killed');
  });

  it('refuses bad spawns with clear messages', async () => {
    const needsGithub = customAgent(
      '---\nname: gh-helper\ndescription: Works with GitHub\nrequiredMcpServers: [github]\n---\nYou use GitHub.',
    );
    const spawn = (input: Record<string, unknown>) => [
      agentCall({ description: 'x', prompt: 'x', ...input }),
    ];
    current = await createTestSession({
      agents: [needsGithub],
      policy: rules([
        {
          match: { when: isMain, lastUserText: 'unknown' },
          reply: spawn({ subagent_type: 'no-such-agent' }),
        },
        {
          match: { when: isMain, lastUserText: 'denied' },
          reply: spawn({ subagent_type: 'Plan' }),
        },
        {
          match: { when: isMain, lastUserText: 'mcp' },
          reply: spawn({ subagent_type: 'gh-helper' }),
        },
        { match: { when: isMain, lastUserText: 'fork twice' }, reply: spawn({}) },
        { match: { agent: 'fork', forkDirective: true }, reply: spawn({}) },
        {
          match: { agent: 'fork', toolResult: 'Agent' },
          reply: (request) => `Scope: x\nResult: ${resultText(request)}`,
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `ERR ${resultText(request)}`,
        },
      ]),
      session: {
        forkEnabled: true,
        denyRules: [
          {
            source: 'projectSettings',
            ruleBehavior: 'deny',
            ruleValue: { toolName: 'Agent', ruleContent: 'Plan' },
          },
        ],
      },
    });
    const unknown = await current.session.send('unknown');
    expect(unknown.text).toContain('Agent type "no-such-agent" not found. Available agents:');
    expect(unknown.text).toContain('general-purpose');
    const denied = await current.session.send('denied');
    expect(denied.text).toContain('Agent(Plan)');
    expect(denied.text).toContain('projectSettings');
    const mcp = await current.session.send('mcp');
    expect(mcp.text).toContain('requires MCP servers matching: github');
    expect(mcp.text).toContain('MCP servers with tools: none');
    const fork = await current.session.send('fork twice');
    expect(fork.text).toContain('cannot fork again');
  });

  it("refuses a type outside the caller's allowedAgentTypes", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'x', subagent_type: 'general-purpose' })],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `ERR ${resultText(request)}`,
        },
      ]),
    });
    const definitions = current.session.context.options.agentDefinitions!;
    current.session.context.options.agentDefinitions = {
      ...definitions,
      allowedAgentTypes: ['Explore'],
    };
    const { text } = await current.session.send('spawn');
    expect(text).toContain('may only start these agent types: Explore');
  });

  it('waits for a pending MCP server and stops early when it fails', async () => {
    const needsGithub = customAgent(
      '---\nname: gh-helper\ndescription: Works with GitHub\nrequiredMcpServers: [github]\n---\nYou use GitHub.',
    );
    current = await createTestSession({
      agents: [needsGithub],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'x', subagent_type: 'gh-helper' })],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `ERR ${resultText(request)}`,
        },
      ]),
      session: { mcpPollMs: 10, mcpWaitMs: 20_000 },
    });
    const { session } = current;
    session.context.setAppState((state) => ({
      ...state,
      mcp: { ...state.mcp, clients: [{ name: 'github', type: 'pending' }] },
    }));
    setTimeout(() => {
      session.context.setAppState((state) => ({
        ...state,
        mcp: {
          ...state.mcp,
          clients: [{ name: 'github', type: 'failed', error: 'spawn gh-mcp ENOENT' }],
        },
      }));
    }, 100);
    const { text } = await session.send('spawn');
    expect(text).toContain('requires MCP servers matching: github');
    expect(text).toContain('github (failed: spawn gh-mcp ENOENT)');
  });

  it('keeps a worktree that has changes and removes one that has none', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { agent: 'general-purpose', lastUserText: 'add a file', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Write',
              input: { file_path: 'added.txt', content: 'new\n' },
            },
          ],
        },
        { match: { agent: 'general-purpose', toolResult: 'Write' }, reply: 'Added added.txt.' },
        {
          match: { agent: 'general-purpose', lastUserText: 'look only' },
          reply: 'Nothing to change.',
        },
        {
          match: { when: isMain, lastUserText: 'edit', toolResult: false },
          reply: [
            agentCall({
              description: 'edit',
              prompt: 'add a file',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'read', toolResult: false },
          reply: [
            agentCall({
              description: 'read',
              prompt: 'look only',
              subagent_type: 'general-purpose',
              isolation: 'worktree',
            }),
          ],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => resultText(request),
        },
      ]),
      session: { permissionMode: 'acceptEdits' },
    });
    const { cwd, session } = current;
    const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    await writeFile(join(cwd, 'README.md'), '# repo\n');
    git('add', '.');
    git('-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-qm', 'init');

    const edited = await session.send('edit');
    const path = /worktreePath: (\S+)/.exec(edited.text)?.[1];
    const branch = /worktreeBranch: (\S+)/.exec(edited.text)?.[1];
    expect(path).toBeDefined();
    expect(await readFile(join(path!, 'added.txt'), 'utf8')).toBe('new\n');
    expect(git('branch', '--list', branch!)).toContain(branch!);
    expect(existsSync(join(cwd, 'added.txt'))).toBe(false);

    const before = git('worktree', 'list');
    const read = await session.send('read');
    expect(read.text).toContain('Nothing to change.');
    expect(read.text).not.toContain('worktreePath');
    expect(git('worktree', 'list')).toBe(before);
    expect(git('branch', '--list', 'delegate/*').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('retries a 529 in a child, and reports a child that fails for good with its transcript intact', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `notified: ${request.lastUserText}`,
        },
        {
          match: { when: isMain, lastUserText: 'flaky', toolResult: false },
          reply: [
            agentCall({
              description: 'flaky',
              prompt: 'flaky job',
              subagent_type: 'general-purpose',
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'doomed', toolResult: false },
          reply: [
            agentCall({
              description: 'doomed',
              prompt: 'doomed job',
              subagent_type: 'general-purpose',
              run_in_background: true,
            }),
          ],
        },
        { match: { agent: 'general-purpose', lastUserText: 'flaky job' }, reply: 'flaky job done' },
        {
          match: { agent: 'general-purpose', lastUserText: 'doomed job' },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo step one' } }],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => resultText(request),
        },
      ]),
      sim: {
        faults: [
          {
            kind: 'overloaded',
            times: 1,
            match: { agent: 'general-purpose', lastUserText: 'flaky job' },
          },
          { kind: 'api_error', match: { agent: 'general-purpose', toolResult: 'Bash' } },
        ],
      },
      session: { permissionMode: 'bypassPermissions' },
    });
    const { session, sim } = current;
    const flaky = await session.send('flaky');
    expect(flaky.text).toContain('flaky job done');
    const flakyRequests = sim.journal.filter((entry) => agentOf(entry) === 'general-purpose');
    expect(flakyRequests.map((entry) => entry.status)).toEqual([529, 200]);
    expect(flakyRequests[1]!.headers['x-stainless-retry-count']).toBe('1');

    const events: AgentEvent[] = [];
    session.events.on((event) => events.push(event));
    const doomed = await session.send('doomed', { waitForBackground: true });
    expect(doomed.text).toContain('notified:');
    expect(doomed.text).toContain('status: failed');
    expect(doomed.text).toContain('500');
    const failed = events.find((event) => event.type === 'agent.failed');
    expect(failed).toMatchObject({ code: 'API_ERROR' });
    const lines = await readTranscript(session.transcript!.agentPath(failed!.agentId));
    expect(lines.map((line) => line.type)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(lines[1])).toContain('echo step one');
    expect(JSON.stringify(lines[2])).toContain('step one');
  });

  it('moves a running foreground agent to the background and notifies the parent when it ends', async () => {
    // The agent's Bash call waits for a file the test writes once the agent is in the
    // background: it cannot finish early, however slow the machine.
    const gate = 'release-the-agent';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `done in background: ${request.lastUserText}`,
        },
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'slow job',
              prompt: 'slow job',
              subagent_type: 'general-purpose',
            }),
          ],
        },
        {
          match: { agent: 'general-purpose', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: `while [ ! -e ${gate} ]; do sleep 0.05; done; echo slept` },
            },
          ],
        },
        { match: { agent: 'general-purpose', toolResult: 'Bash' }, reply: 'slow job finished' },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `moved: ${resultText(request)}`,
        },
      ]),
      session: { permissionMode: 'bypassPermissions', backgroundHintMs: 50 },
    });
    const { session, sim, cwd } = current;
    const events: AgentEvent[] = [];
    const moved: boolean[] = [];
    session.events.on((event) => {
      events.push(event);
      // An action, not an assertion: its outcome is checked after the turn.
      if (event.type === 'agent.background_hint')
        moved.push(session.backgroundAgent(event.agentId));
    });
    const first = await session.send('run the slow job');
    expect(moved).toEqual([true]);
    expect(first.text).toContain('moved: Started general-purpose agent');
    const types = events.map((event) => event.type);
    expect(types).toContain('agent.background_hint');
    expect(types).toContain('agent.backgrounded');
    await writeFile(join(cwd, gate), '');
    const finished = await session.send('', { waitForBackground: true });
    expect(finished.text).toContain('slow job finished');
    // It kept running rather than restarting: one request per turn of its script.
    expect(sim.journal.filter((entry) => agentOf(entry) === 'general-purpose')).toHaveLength(2);
    expect(session.backgroundAgent(events[0]!.agentId)).toBe(false);
  });

  it('continues a finished agent with SendMessage, keeping its context', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => `follow-up: ${request.lastUserText}`,
        },
        {
          match: { when: isMain, lastUserText: 'start', toolResult: false },
          reply: [
            agentCall({
              description: 'remember',
              prompt: 'Remember the word kiwi',
              subagent_type: 'general-purpose',
              name: 'keeper',
            }),
          ],
        },
        {
          match: { when: isMain, lastUserText: 'ask again', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'SendMessage',
              input: { to: 'keeper', message: 'What was the word?' },
            },
          ],
        },
        {
          match: { agent: 'general-purpose', lastUserText: 'What was the word?' },
          reply: (request) =>
            `The word was ${/Remember the word (\w+)/.exec(JSON.stringify(request.messages))?.[1] ?? 'lost'}.`,
        },
        { match: { agent: 'general-purpose' }, reply: 'Remembered.' },
        { match: { when: isMain, toolResult: true }, reply: (request) => resultText(request) },
      ]),
    });
    const { session } = current;
    await session.send('start');
    const resumed = await session.send('ask again', { waitForBackground: true });
    expect(resumed.text).toContain('The word was kiwi.');
  });
});
