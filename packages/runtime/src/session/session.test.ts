import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { getLastAssistantMessage, getText } from '@delegate/core';
import { diagnoseCacheBreak, fingerprintRequest } from '@delegate/fork-cache';
import { isCompacted } from '../lifecycle/agent-directory.js';
import { createApiClient } from './model-config.js';
import { DelegateSession } from './session.js';
import {
  agentCall,
  isMain,
  mainStartsBackgroundJobs,
  resultText,
} from '../__fixtures__/sim-helpers.js';
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

  it('refuses a second send while a turn runs, adding nothing, and the first turn answers alone', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    current = await createTestSession({
      policy: rules([
        {
          match: { lastUserText: 'slow' },
          reply: async () => {
            await released;
            return 'slow answer';
          },
        },
        { match: {}, reply: (request) => `answer to ${request.lastUserText}` },
      ]),
    });
    const { session, sim } = current;
    const first = session.send('slow question');
    const error = await session.send('second question').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((error as Error).message).toContain('send: a turn of this session is still running');
    // run() and settleInFlightToolCalls() are refused the same way while the turn runs.
    await expect(session.run('third').next()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(session.settleInFlightToolCalls()).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    release();
    expect((await first).text).toBe('slow answer');
    expect(sim.journal.entries).toHaveLength(1);
    const userTexts = session.messages.flatMap((message) =>
      message.type === 'user' && typeof message.message.content === 'string'
        ? [message.message.content]
        : [],
    );
    expect(userTexts).not.toContain('second question');
    // Once the turn has ended, the next send runs.
    expect((await session.send('second question')).text).toBe('answer to second question');
  });

  it('cancels the response stream when an onEvent handler throws, and send() rejects with its error', async () => {
    let requests = 0;
    current = await createTestSession({
      // A long answer, streamed slowly, for the first request only.
      policy: rules([{ match: {}, reply: () => (requests++ === 0 ? 'word '.repeat(400) : 'ok') }]),
      sim: { pacing: { msPerToken: 5 } },
    });
    const { session, sim } = current;
    const error = await session
      .send('talk', {
        onEvent: (event) => {
          if (event.type === 'stream_event') throw new Error('the renderer failed');
        },
      })
      .catch((caught: unknown) => caught);
    expect((error as Error).message).toBe('the renderer failed');
    // The request was left, not streamed to its end unread.
    expect(await waitUntil(() => sim.journal.entries[0]?.error !== undefined)).toBe(true);
    expect(sim.journal.entries[0]?.error?.type).toBe('client_disconnected');
    // The session goes on: the next turn runs.
    expect((await session.send('again')).outcome.reason).toBe('completed');
  });

  it('cancels the response stream when a run() loop breaks, and the next send runs', async () => {
    let requests = 0;
    current = await createTestSession({
      policy: rules([{ match: {}, reply: () => (requests++ === 0 ? 'word '.repeat(400) : 'ok') }]),
      sim: { pacing: { msPerToken: 5 } },
    });
    const { session, sim } = current;
    for await (const event of session.run('talk')) if (event.type === 'stream_event') break;
    expect(await waitUntil(() => sim.journal.entries[0]?.error !== undefined)).toBe(true);
    expect(sim.journal.entries[0]?.error?.type).toBe('client_disconnected');
    expect((await session.send('again')).text).toBe('ok');
  });

  it("gives '' as the text of a send that got no answer, never the previous turn's text", async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'the first answer' }) });
    const { session } = current;
    expect((await session.send('hello')).text).toBe('the first answer');
    // Nothing waits for an answer: no request, and no answer to report.
    expect(await session.send('')).toMatchObject({ text: '', outcome: { turns: 0 } });
    await session.close();
    // A closed session sends nothing; its send says so with an aborted outcome and no text.
    expect(await session.send('after close')).toMatchObject({
      text: '',
      outcome: { reason: 'aborted' },
    });
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

describe('permission rules given as strings', () => {
  it('denies by a rule string, and asks by an ask rule string even in bypassPermissions', async () => {
    const asked: string[] = [];
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Bash', input: { command: 'rm -f keep.txt' } },
            { type: 'tool_use', name: 'Bash', input: { command: 'git push origin main' } },
            { type: 'tool_use', name: 'Bash', input: { command: 'echo free' } },
          ],
        },
        {
          match: { when: isMain, toolResult: 'Bash' },
          reply: (request) => request.toolResults.map((result) => `[${result.content}]`).join('\n'),
        },
      ]),
      session: {
        permissionMode: 'bypassPermissions',
        denyRules: ['Bash(rm:*)'],
        askRules: ['Bash(git push:*)'],
        ask: async (request) => {
          asked.push(request.message);
          return { behavior: 'deny', message: 'the person said no' };
        },
      },
    });
    await writeFile(join(current.cwd, 'keep.txt'), 'keep');
    const { text } = await current.session.send('go');
    expect(text).toContain(
      '[Permission denied: Bash is denied by the rule Bash(rm:*) from session.]',
    );
    expect(text).toContain('[Permission denied: the person said no]');
    expect(text).toMatch(/\[free/);
    expect(asked).toEqual(['Bash matches the ask rule Bash(git push:*) from session.']);
    expect(existsSync(join(current.cwd, 'keep.txt'))).toBe(true);
  });

  it('denies a call whose ask handler answers something that is not a decision, saying what it returned', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'git push origin main' } }],
        },
        {
          match: { when: isMain, toolResult: 'Bash' },
          reply: (request) => request.toolResults.map((result) => `[${result.content}]`).join('\n'),
        },
      ]),
      session: {
        askRules: ['Bash(git push:*)'],
        // A plain 'allow' is not a decision: the call is denied, not run.
        ask: async () => 'allow' as never,
      },
    });
    const { text } = await current.session.send('go');
    expect(text).toContain(
      "Bash was not allowed: the session's ask handler returned \"allow\", not a decision such as { behavior: 'allow' }",
    );
  });

  it('refuses bad options before anything starts, naming the field', async () => {
    await expect(
      DelegateSession.create({ cwd: '/tmp', apiKey: 'k', denyRules: ['Bash(rm:*'] }),
    ).rejects.toThrow(
      /DelegateSession\.create: options\.denyRules\[0\]: "Bash\(rm:\*" is not a permission rule/,
    );
  });

  it('refuses a cwd that is not an existing directory, naming options.cwd', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const file = join(current.cwd, 'notes.txt');
    await writeFile(file, 'notes\n');
    const create = (cwd: string) =>
      DelegateSession.create({ cwd, apiKey: 'k', baseURL: current!.sim.url, transcriptDir: false });
    await expect(create(join(current.cwd, 'missing'))).rejects.toThrow(
      /DelegateSession\.create: options\.cwd: ".*missing" does not exist/,
    );
    await expect(create(file)).rejects.toThrow(/options\.cwd: ".*notes\.txt" is not a directory/);
    await expect(create('/tmp/\0x')).rejects.toThrow(/options\.cwd: .* contains a NUL byte/);
    expect(current.sim.journal.entries).toHaveLength(0);
  });

  it('refuses a homeDir with a file in the way, naming options.homeDir; a missing one is a new home', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'ok' }) });
    const file = join(current.cwd, 'notes.txt');
    await writeFile(file, 'notes\n');
    const create = (homeDir: string) =>
      DelegateSession.create({
        cwd: current!.cwd,
        homeDir,
        apiKey: 'k',
        baseURL: current!.sim.url,
        transcriptDir: false,
      });
    await expect(create(file)).rejects.toThrow(
      /DelegateSession\.create: options\.homeDir: ".*notes\.txt" is a file, not a folder/,
    );
    await expect(create(join(file, 'home'))).rejects.toThrow(
      /options\.homeDir: ".*notes\.txt\/home" has a file where a folder should be/,
    );
    await expect(create('/tmp/\0x')).rejects.toThrow(/options\.homeDir: .* contains a NUL byte/);
    (await create(join(current.cwd, 'new-home'))).abort();
    // A relative one is taken from the process working directory.
    (await create(relative(process.cwd(), current.homeDir))).abort();
    expect(current.sim.journal.entries).toHaveLength(0);
  });

  it('takes a relative cwd from the process working directory, once: its files can be read', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }],
        },
        { match: { when: isMain }, reply: (request) => resultText(request) },
      ]),
    });
    await writeFile(join(current.cwd, 'notes.txt'), 'relative notes\n');
    const session = await DelegateSession.create({
      cwd: relative(process.cwd(), current.cwd),
      client: createApiClient({ apiKey: 'k', baseURL: current.sim.url }),
      transcriptDir: false,
      homeDir: current.homeDir,
    });
    expect(session.context.cwd).toBe(current.cwd);
    expect((await session.send('read it')).text).toContain('relative notes');
  });
});

describe('work after a turn', () => {
  it('saves the cache-safe parameters of every completed turn, and forks from them sharing the cache', async () => {
    current = await createTestSession({
      policy: rules([
        { match: { lastUserText: 'Summarise' }, reply: 'Summary: two questions, two answers.' },
        { match: { lastUserText: 'first' }, reply: 'first answer' },
        { match: {}, reply: 'second answer' },
      ]),
      session: { userContext: { projectInstructions: 'Project notes. '.repeat(400) } },
    });
    const { session, sim } = current;
    expect(session.lastCacheSafeParams()).toBeNull();
    await expect(session.forkAfterTurn({ prompt: 'Summarise' })).rejects.toThrow(
      /needs a completed turn/,
    );
    await session.send('first question');
    const afterFirst = session.lastCacheSafeParams()!;
    expect(afterFirst.forkContextMessages.at(-1)?.type).toBe('assistant');
    await session.send('second question');
    const afterSecond = session.lastCacheSafeParams()!;
    expect(afterSecond.forkContextMessages.length).toBeGreaterThan(
      afterFirst.forkContextMessages.length,
    );
    // A snapshot: the session going on does not change what was saved.
    const saved = afterSecond.forkContextMessages.length;
    const result = await session.forkAfterTurn({
      prompt: 'Summarise the session in one line.',
      label: 'summary',
    });
    const answer = getLastAssistantMessage(result.messages);
    expect(getText(answer!.message.content)).toBe('Summary: two questions, two answers.');
    expect(session.lastCacheSafeParams()!.forkContextMessages).toHaveLength(saved);
    const [lastTurn, fork] = sim.journal.entries.slice(-2);
    const diagnosis = diagnoseCacheBreak(
      fingerprintRequest(lastTurn!.body as never),
      fingerprintRequest(fork!.body as never),
    );
    expect(!diagnosis.identical && diagnosis.firstDifference.part).toBe('message');
    expect(fork!.usage!.cache_read_input_tokens).toBeGreaterThan(2_000);
    // The fork's answer stays out of the main conversation.
    expect(getText(getLastAssistantMessage(session.messages)!.message.content)).toBe(
      'second answer',
    );
  });
});

describe('many agents in one session', () => {
  it('runs 60 background agents without a MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      current = await createTestSession({
        policy: rules([
          { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'all back' },
          mainStartsBackgroundJobs(60),
          { match: { when: isMain, toolResult: 'Agent' }, reply: 'started them' },
          { match: { agent: 'general-purpose' }, reply: 'done' },
        ]),
        session: { maxBackgroundAgents: 100, transcriptDir: false },
      });
      await current.session.send('go');
      await current.session.send('', { waitForBackground: true });
      await current.session.flush();
      expect(
        current.session.tasks.list().filter((task) => task.status === 'completed'),
      ).toHaveLength(60);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((warning) => warning.includes('MaxListeners'))).toEqual([]);
  });

  it('compacts finished agents past maxRetainedAgents and resumes one from its transcript when messaged', async () => {
    let kiwiDone = false;
    const until = async (check: () => boolean): Promise<void> => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, lastUserText: '<task-notification>' },
          reply: (request) => request.lastUserText,
        },
        {
          match: { when: isMain, lastUserText: 'start', toolResult: false },
          reply: ['kiwi', 'mango'].map((word) =>
            agentCall({
              description: word,
              prompt: `Remember the word ${word}`,
              subagent_type: 'general-purpose',
              name: `keeper-${word}`,
            }),
          ),
        },
        {
          match: { when: isMain, lastUserText: 'ask', toolResult: false },
          reply: [
            {
              type: 'tool_use',
              name: 'SendMessage',
              input: { to: 'keeper-kiwi', message: 'What was the word?' },
            },
          ],
        },
        { match: { when: isMain, toolResult: true }, reply: (request) => resultText(request) },
        {
          match: { agent: 'general-purpose', lastUserText: 'What was the word?' },
          reply: (request) =>
            `The word was ${/Remember the word (\w+)/.exec(JSON.stringify(request.messages))?.[1] ?? 'lost'}.`,
        },
        {
          // kiwi finishes first, so it is the one compacted (the two run in parallel).
          match: { agent: 'general-purpose', lastUserText: 'Remember the word mango' },
          reply: async () => {
            await until(() => kiwiDone);
            return 'Remembered.';
          },
        },
        {
          match: { agent: 'general-purpose' },
          reply: () => {
            setTimeout(() => (kiwiDone = true), 100);
            return 'Remembered.';
          },
        },
      ]),
      session: { maxRetainedAgents: 1 },
    });
    const { session } = current;
    await session.send('start');
    await session.flush();
    // Only the newest finished agent is kept whole; the other is a summary now.
    expect(isCompacted(session.runtime.agents.get('keeper-kiwi')!)).toBe(true);
    expect(isCompacted(session.runtime.agents.get('keeper-mango')!)).toBe(false);
    const resumed = await session.send('ask', { waitForBackground: true });
    expect(resumed.text).toContain('The word was kiwi.');
  });
});

describe('a custom tool with a huge result', () => {
  it('sends it cut to the result limit, so neither this request nor any later one is too large', async () => {
    const { getBuiltinTools } = await import('@delegate/tools');
    const { z } = await import('zod');
    const { DEFAULT_MAX_TOOL_RESULT_CHARS } = await import('../query/run-tools.js');
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [{ type: 'tool_use', name: 'Huge', input: {} }],
        },
        { match: { when: isMain }, reply: 'fine' },
      ]),
      session: {
        tools: [
          ...getBuiltinTools(),
          {
            name: 'Huge',
            description: () => 'returns 34 MB',
            inputSchema: z.object({}),
            isReadOnly: () => true,
            isConcurrencySafe: () => true,
            // Over the 32 MiB a request may hold.
            call: async () => ({ content: 'H'.repeat(34_000_000) }),
          },
        ],
      },
    });
    const { session, sim } = current;
    expect((await session.send('go')).text).toBe('fine');
    expect((await session.send('and now')).text).toBe('fine');
    // Each prompt: the tool call, then the answer after its result.
    expect(sim.journal.entries.map((entry) => entry.status)).toEqual([200, 200, 200, 200]);
    const sent = JSON.stringify(sim.journal.entries[1]!.body);
    expect(sent).toContain('[… 33600000 more characters of this tool result were cut');
    expect(sent.length).toBeLessThan(DEFAULT_MAX_TOOL_RESULT_CHARS + 50_000);
  });
});
