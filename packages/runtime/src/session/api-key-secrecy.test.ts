import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import type { AgentEvent, Tool } from '@delegate/core';
import { z } from 'zod';
import { agentCall, agentOf, isMain, requestBody } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import { runCommandHook } from '../hooks/run-command-hook.js';
import { DelegateSession } from './session.js';
import type { DelegateSessionOptions } from './session-options.js';

let current: TestSession | undefined;

const savedKey = process.env['ANTHROPIC_API_KEY'];

afterEach(async () => {
  if (savedKey === undefined) delete process.env['ANTHROPIC_API_KEY'];
  else process.env['ANTHROPIC_API_KEY'] = savedKey;
  await current?.cleanup();
  current = undefined;
});

const SECRET = `sk-ant-secret-${Math.random().toString(36).slice(2)}-do-not-log`;

/**
 * A session made from the key, as an application would (the fixture passes its own client),
 * with the built-in agents, in bypassPermissions mode.
 */
async function sessionWithKey(
  test: TestSession,
  options: Partial<DelegateSessionOptions> = {},
): Promise<DelegateSession> {
  const agents = (await import('@delegate/agent-defs')).getBuiltInAgents();
  return DelegateSession.create({
    cwd: test.cwd,
    apiKey: SECRET,
    baseURL: test.sim.url,
    transcriptDir: test.transcriptDir,
    homeDir: test.homeDir,
    agentDefinitions: { activeAgents: agents, allAgents: agents },
    permissionMode: 'bypassPermissions',
    ...options,
  });
}

async function filesUnder(directory: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true }).catch(() => [])) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(path)));
    else found.push(path);
  }
  return found;
}

/** Everything written to stdout, stderr and process warnings while `work` runs. */
async function captureOutput(work: () => Promise<void>): Promise<string> {
  const written: string[] = [];
  const stdout = process.stdout.write.bind(process.stdout);
  const stderr = process.stderr.write.bind(process.stderr);
  const onWarning = (warning: Error): void => {
    written.push(`${warning.name}: ${warning.message} ${warning.stack ?? ''}`);
  };
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(String(chunk));
    return stdout(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(String(chunk));
    return stderr(chunk, ...rest);
  }) as typeof process.stderr.write;
  process.on('warning', onWarning);
  try {
    await work();
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
    process.off('warning', onWarning);
  }
  return written.join('\n');
}

describe('the API key', () => {
  it('never appears in transcripts, events, task states, errors or output, also when it is in the environment', async () => {
    process.env['ANTHROPIC_API_KEY'] = SECRET;
    const events: AgentEvent[] = [];
    const errors: string[] = [];
    const output = await captureOutput(async () => {
      current = await createTestSession({
        sim: {
          apiKeys: [SECRET],
          faults: [
            { kind: 'api_error', onRequests: [2] },
            { kind: 'stream_error', afterEvents: 3, match: { agent: 'Explore' }, times: 1 },
          ],
        },
        policy: rules([
          { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
          {
            match: { when: isMain, toolResult: false },
            reply: [
              agentCall({ description: 'look', prompt: 'Look around', subagent_type: 'Explore' }),
              agentCall({
                description: 'background job',
                prompt: 'Do the job',
                subagent_type: 'general-purpose',
                run_in_background: true,
              }),
              {
                type: 'tool_use',
                name: 'Bash',
                // A model (or a hostile prompt) asking for the environment.
                input: { command: 'echo "key=$ANTHROPIC_API_KEY"; env', description: 'show env' },
              },
            ],
          },
          { match: { when: isMain }, reply: 'all done' },
          { match: { agent: 'Explore' }, reply: 'Looked.' },
          { match: { agent: 'general-purpose' }, reply: 'Job done.' },
        ]),
      });
      const session = await sessionWithKey(current);
      session.events.on((event) => events.push(event));
      try {
        await session.send('go', { waitForBackground: true });
      } catch (error) {
        errors.push(String(error), JSON.stringify(error), String((error as Error).stack));
      }
      // A wrong key: the failure must not quote the key that was sent either.
      const wrong = await DelegateSession.create({
        cwd: current.cwd,
        apiKey: `${SECRET}-wrong`,
        baseURL: current.sim.url,
        transcriptDir: current.transcriptDir,
        homeDir: current.homeDir,
        agentDefinitions: { activeAgents: [], allAgents: [] },
      });
      await wrong.send('hello').catch((error: unknown) => {
        errors.push(String(error), JSON.stringify(error), String((error as Error).stack));
      });
      await session.flush();
      await wrong.flush();
      errors.push(JSON.stringify(session.tasks.list()), JSON.stringify(session.messages));
      session.abort();
      wrong.abort();
    });
    expect(events.some((event) => event.type === 'agent.completed')).toBe(true);
    // The Bash command ran, without the key in its environment.
    expect(errors.some((text) => /key=\\n[A-Za-z_]+=/.test(text))).toBe(true);
    expect(errors.some((text) => /401|authentication/i.test(text))).toBe(true);
    const transcripts = await filesUnder(current!.transcriptDir);
    expect(transcripts.length).toBeGreaterThan(2);
    for (const path of transcripts) {
      expect(await readFile(path, 'utf8'), path).not.toContain('sk-ant-secret');
    }
    expect(JSON.stringify(events)).not.toContain('sk-ant-secret');
    for (const text of errors) expect(text).not.toContain('sk-ant-secret');
    expect(output).not.toContain('sk-ant-secret');
  });

  it('is kept out of transcript files and warnings when an agent file quotes it', async () => {
    // Someone who could run commands wrote the key into an agent's description.
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'leak', prompt: 'go', subagent_type: 'leaky' })],
        },
        { match: { when: isMain }, reply: 'done' },
        { match: { agent: 'leaky' }, reply: 'ok' },
      ]),
    });
    const agentDefs = await import('@delegate/agent-defs');
    const leaky = agentDefs.parseAgentFromMarkdown({
      filePath: join(current.cwd, 'leaky.md'),
      baseDir: current.cwd,
      content: `---\nname: leaky\ndescription: Uses ANTHROPIC_API_KEY=${SECRET}\nskills: [x]\n---\nYou leak ${SECRET}.`,
      source: 'projectSettings',
    });
    if (!leaky.ok) throw new Error(leaky.diagnostic.reason);
    const agents = [...agentDefs.getBuiltInAgents(), leaky.agent];
    const session = await sessionWithKey(current, {
      agentDefinitions: { activeAgents: agents, allAgents: agents },
    });
    const events: AgentEvent[] = [];
    session.events.on((event) => events.push(event));
    await session.send('go');
    await session.flush();
    session.abort();
    // The model was sent the agent list; what is written down is redacted.
    expect(JSON.stringify(current.sim.journal.entries.map((entry) => entry.body))).toContain(
      SECRET,
    );
    const transcripts = await filesUnder(current.transcriptDir);
    expect(transcripts.length).toBeGreaterThan(1);
    for (const path of transcripts)
      expect(await readFile(path, 'utf8'), path).not.toContain(SECRET);
    expect(JSON.stringify(session.events.events)).not.toContain(SECRET);
  });

  it('is kept out of every event and task state when sub-agents repeat it in reports, tool inputs and descriptions', async () => {
    // What a model does with a key it was shown: the agent file below quotes it.
    const quoted = (text: string): string => /sk-ant-secret-\w+-do-not-log/.exec(text)?.[0] ?? '';
    current = await createTestSession({
      policy: rules([
        {
          match: { agent: 'deployer', toolResult: false },
          reply: (request) => [
            { type: 'text', text: `Deploying with ${quoted(request.system)}` },
            {
              type: 'tool_use',
              name: 'Bash',
              input: {
                command: `echo ${quoted(request.system)}`,
                description: `Check ${quoted(request.system)}`,
              },
            },
          ],
        },
        {
          match: { agent: 'deployer' },
          reply: (request) => `Deployed using ${quoted(request.system)}`,
        },
        { match: { when: isMain, lastUserText: '<task-notification>' }, reply: 'noted' },
        {
          match: { when: isMain, toolResult: false },
          reply: (request) => {
            const key = quoted(JSON.stringify(request.body));
            return [
              agentCall({ description: `fg ${key}`, prompt: 'deploy', subagent_type: 'deployer' }),
              agentCall({
                description: `bg ${key}`,
                prompt: 'deploy',
                subagent_type: 'deployer',
                run_in_background: true,
              }),
            ];
          },
        },
        { match: { when: isMain }, reply: 'reported' },
      ]),
    });
    const agentDefs = await import('@delegate/agent-defs');
    const deployer = agentDefs.parseAgentFromMarkdown({
      filePath: join(current.cwd, 'deployer.md'),
      baseDir: current.cwd,
      content: `---\nname: deployer\ndescription: Deploys with ${SECRET}\n---\nDeploy with the key ${SECRET} when asked.`,
      source: 'projectSettings',
    });
    if (!deployer.ok) throw new Error(deployer.diagnostic.reason);
    const agents = [...agentDefs.getBuiltInAgents(), deployer.agent];
    const session = await sessionWithKey(current, {
      agentDefinitions: { activeAgents: agents, allAgents: agents },
    });
    const events: AgentEvent[] = [];
    session.events.on((event) => events.push(event));
    const { text } = await session.send('Deploy the app', { waitForBackground: true });
    await session.flush();
    await new Promise((resolve) => setImmediate(resolve));
    const tasks = session.tasks.list();
    session.abort();

    // Both agents ran and repeated the key: it shows redacted where it was.
    const ofType = <T extends AgentEvent['type']>(type: T) =>
      events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);
    expect(ofType('agent.started').map((event) => event.description)).toEqual([
      'fg [REDACTED]',
      'bg [REDACTED]',
    ]);
    expect(ofType('agent.completed').map((event) => event.result)).toEqual([
      'Deployed using [REDACTED]',
      'Deployed using [REDACTED]',
    ]);
    expect(ofType('agent.tool_use').map((event) => event.input)).toContainEqual({
      command: 'echo [REDACTED]',
      description: 'Check [REDACTED]',
    });
    expect(JSON.stringify(ofType('agent.message'))).toContain('Deploying with [REDACTED]');
    expect(
      ofType('agent.progress').some((event) => event.lastActivity?.includes('[REDACTED]')),
    ).toBe(true);
    expect(tasks.map((task) => task.result)).toEqual([
      'Deployed using [REDACTED]',
      'Deployed using [REDACTED]',
    ]);
    expect(tasks.some((task) => task.notification?.text.includes('[REDACTED]'))).toBe(true);
    for (const [where, shown] of [
      ['the events listeners got', JSON.stringify(events)],
      ['the event history', JSON.stringify(session.events.events)],
      ['the task states', JSON.stringify(tasks)],
      ['the tasks of the app state', JSON.stringify(session.context.getAppState().tasks)],
    ] as const) {
      expect(shown, where).not.toContain(SECRET);
    }
    // What the agents' conversations hold, and so what their requests send, is not changed:
    // each deployer's second request carries its own tool call as the model wrote it.
    const followUps = current.sim.journal.entries.filter(
      (entry) =>
        agentOf(entry) === 'deployer' && JSON.stringify(entry.body).includes('tool_result'),
    );
    expect(followUps).toHaveLength(2);
    for (const entry of followUps)
      expect(JSON.stringify(requestBody(entry).messages)).toContain(`echo ${SECRET}`);
    // The main agent's conversation went on: it got the report (redacted, as every tool
    // result is) and answered the notification.
    expect(JSON.stringify(session.messages)).toContain('Deployed using [REDACTED]\\n\\nagentId: ');
    // The background agent's notification reached it redacted too.
    expect(JSON.stringify(session.messages)).toMatch(
      /<task-notification>.*Deployed using \[REDACTED\]/,
    );
    expect(text).toBe('noted');
  });

  it('is not in the environment of hook commands (an agent file of a cloned repository defines them)', async () => {
    process.env['ANTHROPIC_API_KEY'] = SECRET;
    process.env['ANTHROPIC_AUTH_TOKEN'] = SECRET;
    const result = await runCommandHook({
      command: 'echo "key=$ANTHROPIC_API_KEY token=$ANTHROPIC_AUTH_TOKEN"',
      cwd: process.cwd(),
      input: {},
    });
    expect(result.stdout.trim()).toBe('key= token=');
    delete process.env['ANTHROPIC_AUTH_TOKEN'];
  });

  it('is replaced in what tools return, also from a file or a command that has it, and so are the secrets given to the session', async () => {
    const serverToken = `server-token-${Math.random().toString(36).slice(2)}`;
    current = await createTestSession({
      sim: { apiKeys: [SECRET] },
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Read', input: { file_path: '.env' } },
            {
              type: 'tool_use',
              name: 'Bash',
              // What a model can do although its environment has no key: read the parent's.
              input: { command: 'cat .env; echo "$HOST_TOKEN"', description: 'show the keys' },
            },
            agentCall({ description: 'look', prompt: 'Read .env', subagent_type: 'Explore' }),
          ],
        },
        {
          match: { when: isMain },
          reply: (request) => `Seen: ${request.toolResults.map((r) => r.content).join('\n')}`,
        },
        {
          match: { agent: 'Explore', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Read', input: { file_path: '.env' } }],
        },
        {
          match: { agent: 'Explore' },
          reply: (request) => `Explore saw ${request.toolResults[0]?.content}`,
        },
      ]),
    });
    await writeFile(
      join(current.cwd, '.env'),
      `ANTHROPIC_API_KEY=${SECRET}\nOTHER=${serverToken}\n`,
    );
    const events: AgentEvent[] = [];
    const { getBuiltinTools } = await import('@delegate/tools');
    const session = await sessionWithKey(current, {
      tools: getBuiltinTools({ bash: { env: { ...process.env, HOST_TOKEN: serverToken } } }),
      secrets: [serverToken],
    });
    session.events.on((event) => events.push(event));
    const { text } = await session.send('go');
    await session.flush();
    session.abort();
    // The tools did read the file: the model sees it with the values replaced.
    expect(text).toContain('ANTHROPIC_API_KEY=[REDACTED]');
    expect(text).toContain('OTHER=[REDACTED]');
    expect(text).toContain('Explore saw');
    const seenByModel = JSON.stringify(current.sim.journal.entries.map((entry) => entry.body));
    const transcripts = await filesUnder(current.transcriptDir);
    expect(transcripts.length).toBeGreaterThan(1);
    for (const content of [
      seenByModel,
      JSON.stringify(events),
      JSON.stringify(session.messages),
      ...(await Promise.all(transcripts.map((path) => readFile(path, 'utf8')))),
    ]) {
      expect(content).not.toContain(SECRET);
      expect(content).not.toContain(serverToken);
    }
  });
});

describe('the secrets option', () => {
  it('refuses a secret too short to redact, naming its place and never its value', async () => {
    const error = await DelegateSession.create({
      cwd: '/tmp',
      apiKey: 'k',
      transcriptDir: false,
      secrets: ['long-enough-value', 'hunter2'],
    }).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(
      /options\.secrets\[1\]: is under 8 characters: a value that short cannot be redacted/,
    );
    expect(JSON.stringify(error)).not.toContain('hunter2');
    expect(String((error as Error).stack)).not.toContain('hunter2');
  });

  it('is replaced in what a tool reports as progress, which events, messages and the transcript keep', async () => {
    const secret = 'db-password-hunter2-XYZ';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [{ type: 'tool_use', name: 'TailLog', input: {} }],
        },
        { match: { when: isMain }, reply: 'done' },
      ]),
    });
    const tailLog: Tool = {
      name: 'TailLog',
      description: async () => 'Tails a log.',
      inputSchema: z.object({}),
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      call: async (_input, _context, extras) => {
        extras?.onProgress?.({
          line: `KEY=${SECRET} PASS=${secret}`,
          nested: [{ [`key ${secret}`]: `again ${SECRET}` }],
          count: 3,
        });
        return { content: 'tailed' };
      },
    };
    const session = await sessionWithKey(current, { tools: [tailLog], secrets: [secret] });
    const events: unknown[] = [];
    session.events.on((event) => events.push(event));
    const streamed: unknown[] = [];
    await session.send('go', { onEvent: (event) => streamed.push(event) });
    await session.flush();
    const progress = session.messages.find((message) => message.type === 'progress');
    expect(progress).toMatchObject({
      data: {
        line: 'KEY=[REDACTED] PASS=[REDACTED]',
        nested: [{ 'key [REDACTED]': 'again [REDACTED]' }],
        count: 3,
      },
    });
    const transcripts = await Promise.all(
      (await filesUnder(current.transcriptDir)).map((file) => readFile(file, 'utf8')),
    );
    for (const [where, text] of [
      ['messages', JSON.stringify(session.messages)],
      ['the events', JSON.stringify(events)],
      ['the streamed events', JSON.stringify(streamed)],
      ['the transcripts', transcripts.join('\n')],
    ] as const) {
      expect(text, where).not.toContain(SECRET);
      expect(text, where).not.toContain(secret);
    }
    expect(transcripts.join('\n')).toContain('KEY=[REDACTED]');
  });

  it('is not quoted by an API error, as a key with a line break in it would make the HTTP layer do', async () => {
    current = await createTestSession({ policy: rules([], { fallback: 'hi' }) });
    // A trailing line break (a key read from a file) is trimmed by the HTTP layer: accepted.
    await expect(sessionWithKey(current, { apiKey: `${SECRET}\n` })).resolves.toBeDefined();
    // One inside the key cannot be sent: refused at create, and the key is not shown.
    const refusal = await sessionWithKey(current, { apiKey: `${SECRET}\nsecond-line` }).catch(
      (error: unknown) => error as Error,
    );
    expect(refusal).toBeInstanceOf(Error);
    expect((refusal as Error).message).toMatch(
      /options\.apiKey: holds a space, line break or control character inside it/,
    );
    expect(JSON.stringify(refusal) + String((refusal as Error).stack)).not.toContain(SECRET);
    // A client built elsewhere with such a key fails at its request: the error does not quote it.
    const Anthropic = (await import('@anthropic-ai/sdk')).default;
    const broken = `${SECRET}\u0000second-line`;
    const session = await sessionWithKey(current, {
      client: new Anthropic({ apiKey: broken, baseURL: current.sim.url, maxRetries: 0 }),
    });
    const failure = await session.send('hello').then(
      () => new Error('expected the request to fail'),
      (error: unknown) => error as Error,
    );
    expect(failure.message).toMatch(/The Messages API request of the main agent/);
    const shown = [
      failure.message,
      String(failure.stack),
      String((failure.cause as Error | undefined)?.message),
      String((failure.cause as Error | undefined)?.stack),
    ].join('\n');
    expect(shown).not.toContain(SECRET.slice(0, 20));
    expect(failure.message).toContain('[REDACTED]');
  });

  it('leaves no piece of a secret in a tool result: overlapping secrets, and a secret a tool cut through', async () => {
    const first = 'Xk3pQ9vLmZ7r';
    const second = 'mZ7rT2wY-second';
    const cut = 'Zq8SecretTokenValue42';
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Read', input: { file_path: 'overlap.txt' } },
            // Bash keeps the head and tail of a long output: the secret straddles the cut.
            { type: 'tool_use', name: 'Bash', input: { command: 'cat big.txt' } },
            // Read cuts a line past 2,000 characters, Grep past its own limit.
            { type: 'tool_use', name: 'Read', input: { file_path: 'long-line.txt' } },
            { type: 'tool_use', name: 'Grep', input: { pattern: 'MARK', output_mode: 'content' } },
          ],
        },
        {
          match: { when: isMain },
          reply: (request) => request.toolResults.map((r) => r.content).join('\n'),
        },
      ]),
    });
    await writeFile(join(current.cwd, 'overlap.txt'), `A=${first.slice(0, 8)}${second}\n`);
    await writeFile(
      join(current.cwd, 'big.txt'),
      `${'a'.repeat(14_990)}${cut}${'b'.repeat(40_000)}`,
    );
    await writeFile(join(current.cwd, 'long-line.txt'), `${'c'.repeat(1_990)}${cut}\n`);
    await writeFile(join(current.cwd, 'grep.txt'), `MARK ${'d'.repeat(490)}${cut}\n`);
    const { getBuiltinTools } = await import('@delegate/tools');
    const session = await sessionWithKey(current, {
      tools: getBuiltinTools(),
      secrets: [first, second, cut],
    });
    const { text } = await session.send('go');
    session.abort();
    // Each tool did cut: the marks are there.
    expect(text).toMatch(/bytes of output cut from the middle/);
    expect(text).toMatch(/line truncated/);
    expect(text).toMatch(/d\[REDACTED\]… \[\d+ more characters\]/);
    for (const piece of [first, second, cut].flatMap((secret) => [
      secret.slice(0, 4),
      secret.slice(-4),
    ])) {
      expect(text, piece).not.toContain(piece);
    }
    expect(text).toContain('A=[REDACTED]');
  });
});
