import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import type { AgentEvent } from '@delegate/core';
import {
  agentCall,
  agentOf,
  customAgent,
  isMain,
  resultText,
} from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

// A guard in the shape people write them: read the call from stdin, exit 2 to block.
const GUARD = `
let input = '';
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  const call = JSON.parse(input);
  require('node:fs').appendFileSync('hook-calls.jsonl', JSON.stringify(call) + '\\n');
  if (call.hook_event_name === 'PreToolUse' && /\\brm\\b/.test(call.tool_input.command)) {
    process.stderr.write('deleting files is not allowed here');
    process.exit(2);
  }
  if (call.hook_event_name === 'PostToolUse') {
    process.stderr.write('post-check saw: ' + call.tool_response.trim());
    process.exit(2);
  }
  process.exit(0);
});
`;

function guardedAgent(hooks: string) {
  return customAgent(
    `---\nname: guarded\ndescription: runs shell commands\ntools: Bash\nhooks:\n${hooks}\n---\nYou run commands.`,
  );
}

describe('PreToolUse and PostToolUse hooks of a sub-agent', () => {
  it('blocks a call when a PreToolUse hook exits 2, with its stderr as the reason', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({ description: 'clean', prompt: 'clean up', subagent_type: 'guarded' }),
          ],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        {
          match: { agent: 'guarded', toolResult: false },
          reply: [
            { type: 'tool_use', name: 'Bash', input: { command: 'rm precious.txt' } },
            { type: 'tool_use', name: 'Bash', input: { command: 'echo hello' } },
          ],
        },
        {
          match: { agent: 'guarded', toolResult: 'Bash' },
          reply: (request) => request.toolResults.map((result) => `[${result.content}]`).join('\n'),
        },
      ]),
      agents: [
        guardedAgent(
          [
            '  PreToolUse:',
            '    - matcher: Bash',
            '      hooks:',
            '        - type: command',
            '          command: node guard.cjs',
            '  PostToolUse:',
            '    - matcher: Bash',
            '      hooks:',
            '        - type: command',
            '          command: node guard.cjs',
          ].join('\n'),
        ),
      ],
      session: { permissionMode: 'bypassPermissions' },
    });
    const { cwd, session } = current;
    await writeFile(join(cwd, 'guard.cjs'), GUARD);
    await writeFile(join(cwd, 'precious.txt'), 'keep me');
    const { text } = await session.send('go');
    expect(text).toContain(
      '[A PreToolUse hook blocked this Bash call: deleting files is not allowed here]',
    );
    expect(existsSync(join(cwd, 'precious.txt'))).toBe(true);
    expect(text).toMatch(/\[hello[^]*PostToolUse hook feedback: post-check saw: hello/);
    const calls = (await readFile(join(cwd, 'hook-calls.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The blocked call never ran, so it has no PostToolUse.
    expect(calls.map((call) => call['hook_event_name'])).toEqual([
      'PreToolUse',
      'PreToolUse',
      'PostToolUse',
    ]);
    expect(calls[0]).toMatchObject({
      session_id: session.sessionId,
      cwd,
      tool_name: 'Bash',
      tool_input: { command: 'rm precious.txt' },
      agent_type: 'guarded',
    });
  });

  it('reports a hook that fails another way as a warning and lets the call go on', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'run', prompt: 'run', subagent_type: 'guarded' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        {
          match: { agent: 'guarded', toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo went on' } }],
        },
        { match: { agent: 'guarded' }, reply: (request) => resultText(request) },
      ]),
      agents: [
        guardedAgent(
          [
            '  PreToolUse:',
            '    - hooks:',
            '        - type: command',
            "          command: 'echo broken, key sk-hook-secret-0123 >&2; exit 1'",
          ].join('\n'),
        ),
      ],
      session: { permissionMode: 'bypassPermissions', secrets: ['sk-hook-secret-0123'] },
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    const { text } = await current.session.send('go');
    expect(text).toContain('went on');
    const warnings = events.flatMap((event) => (event.type === 'agent.warning' ? [event] : []));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'HOOK_FAILED' });
    expect(warnings[0]!.message).toMatch(/exited with code 1: broken, key \[REDACTED\]/);
    // The hook's command line is quoted too: the secret goes from it as well.
    expect(JSON.stringify(events)).not.toContain('sk-hook-secret-0123');
  });

  it('refuses to start an agent whose PreToolUse hook cannot run', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'run', prompt: 'run', subagent_type: 'guarded' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
        { match: { agent: 'guarded' }, reply: 'should not run' },
      ]),
      agents: [
        guardedAgent(
          [
            '  PreToolUse:',
            '    - matcher: Bash',
            '      hooks:',
            // A hook shape Claude Code accepts, but only command hooks can run here.
            '        - type: prompt',
            '          prompt: Is this command safe?',
          ].join('\n'),
        ),
      ],
    });
    const { text } = await current.session.send('go');
    expect(text).toMatch(/Agent "guarded".*hooks\.PreToolUse\[0\]\.hooks\[0\]/);
    expect(
      current.sim.journal.filter((entry) => entry.headers['x-delegate-agent'] !== undefined),
    ).toHaveLength(0);
  });
});

describe('hooks of the main agent (mainAgentHooks)', () => {
  const guardHooks = {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'node guard.cjs' }] }],
  };

  it("run around the main agent's calls and its forks' calls", async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'rm main-file.txt' } }],
        },
        {
          match: { when: isMain, toolResult: 'Bash' },
          reply: [agentCall({ description: 'fork work', prompt: 'clean up too' })],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `main saw: ${resultText(request)}`,
        },
        // The fork's first request ends with the Agent call's placeholder; then its own Bash.
        {
          match: { agent: 'fork', toolResult: 'Bash' },
          reply: (request) => `fork saw: ${resultText(request)}`,
        },
        {
          match: { agent: 'fork' },
          reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'rm fork-file.txt' } }],
        },
      ]),
      session: {
        permissionMode: 'bypassPermissions',
        forkEnabled: true,
        mainAgentHooks: guardHooks,
      },
    });
    const { cwd, session } = current;
    await writeFile(join(cwd, 'guard.cjs'), GUARD);
    await writeFile(join(cwd, 'main-file.txt'), 'keep');
    await writeFile(join(cwd, 'fork-file.txt'), 'keep');
    const { text } = await session.send('go');
    const afterBash = current.sim.journal.entries.find(
      (entry) => agentOf(entry) === undefined && JSON.stringify(entry.body).includes('tool_result'),
    );
    expect(JSON.stringify(afterBash?.body)).toContain(
      'A PreToolUse hook blocked this Bash call: deleting files is not allowed here',
    );
    expect(text).toMatch(/main saw: fork saw: A PreToolUse hook blocked this Bash call/);
    expect(existsSync(join(cwd, 'main-file.txt'))).toBe(true);
    expect(existsSync(join(cwd, 'fork-file.txt'))).toBe(true);
  });

  it("run around a forkAfterTurn fork's calls, whose results keep the session's secrets out", async () => {
    const secret = 'db-password-0123456789';
    current = await createTestSession({
      policy: rules([
        // The fork (its directive is the last user text) deletes, then reads the .env file.
        {
          match: { lastUserText: 'clean up after the turn' },
          reply: [
            { type: 'tool_use', name: 'Bash', input: { command: 'rm keep.txt' } },
            { type: 'tool_use', name: 'Read', input: { file_path: '.env' } },
          ],
        },
        {
          match: { when: (request) => request.toolResults.length === 2 },
          reply: (request) => `fork saw: ${resultText(request)}`,
        },
        { match: {}, reply: 'turn done' },
      ]),
      session: {
        permissionMode: 'bypassPermissions',
        mainAgentHooks: guardHooks,
        secrets: [secret],
      },
    });
    const { cwd, session } = current;
    await writeFile(join(cwd, 'guard.cjs'), GUARD);
    await writeFile(join(cwd, 'keep.txt'), 'keep');
    await writeFile(join(cwd, '.env'), `DB_PASSWORD=${secret}\n`);
    await session.send('first');
    const result = await session.forkAfterTurn({ prompt: 'clean up after the turn' });
    const answer = result.messages.filter((message) => message.type === 'assistant').at(-1);
    expect(JSON.stringify(answer)).toContain('A PreToolUse hook blocked this Bash call');
    expect(JSON.stringify(answer)).toContain('DB_PASSWORD=[REDACTED]');
    expect(existsSync(join(cwd, 'keep.txt'))).toBe(true);
    expect(JSON.stringify(current.sim.journal.entries.map((entry) => entry.body))).not.toContain(
      secret,
    );
  });

  it('refuses a session whose main-agent hook cannot run, naming it', async () => {
    const error = await createTestSession({
      policy: rules([], { fallback: 'ok' }),
      session: {
        mainAgentHooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'prompt' }] }] },
      },
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((error as Error).message).toMatch(
      /^DelegateSession\.create: options\.mainAgentHooks\.PreToolUse\[0\]\.hooks\[0\]\.type \(a hook of the definition the main thread runs as\): Invalid input: expected "command"/,
    );
  });
});

describe('spawn-time warnings', () => {
  it('names skills, unknown MCP servers, an inline one that cannot start and hook events that do not run', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'run', prompt: 'run', subagent_type: 'extras' })],
        },
        { match: { when: isMain }, reply: 'done' },
        { match: { agent: 'extras' }, reply: 'ran' },
      ]),
      agents: [
        customAgent(
          [
            '---',
            'name: extras',
            'description: asks for more than Delegate runs',
            'skills: [pdf, xlsx]',
            'mcpServers:',
            '  - github',
            '  - local-db:',
            '      command: db-mcp',
            'hooks:',
            '  Stop:',
            '    - hooks:',
            '        - type: command',
            '          command: echo stop',
            '---',
            'You have extras.',
          ].join('\n'),
        ),
      ],
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('go');
    const warnings = events.flatMap((event) => (event.type === 'agent.warning' ? [event] : []));
    expect(warnings.map((warning) => warning.code).sort()).toEqual([
      'HOOKS_IGNORED',
      'MCP_SERVERS_IGNORED',
      'MCP_SERVER_FAILED',
      'SKILLS_IGNORED',
    ]);
    const text = warnings.map((warning) => warning.message).join('\n');
    expect(text).toContain('pdf, xlsx');
    // Its inline server is started for the run; there is no db-mcp program here.
    expect(text).toContain('could not start its MCP server "local-db"');
    expect(text).toContain('does not have (github)');
    expect(text).toContain('hooks for Stop');
    const started = events.find((event) => event.type === 'agent.started');
    expect(events.indexOf(started!)).toBeLessThan(events.indexOf(warnings[0]!));
  });

  it('names the tools of a tools list that match no tool the agent can have, and runs it with the rest', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'run', prompt: 'run', subagent_type: 'typos' })],
        },
        { match: { when: isMain }, reply: 'done' },
        { match: { agent: 'typos' }, reply: 'ran' },
      ]),
      agents: [
        customAgent(
          [
            '---',
            'name: typos',
            'description: lists a misspelt tool and an MCP tool of a missing server',
            'tools: Raed, mcp__github__create_issue, Grep',
            '---',
            'You search.',
          ].join('\n'),
        ),
      ],
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('go');
    const warnings = events.flatMap((event) => (event.type === 'agent.warning' ? [event] : []));
    expect(warnings.map((warning) => warning.code)).toEqual(['TOOLS_UNAVAILABLE']);
    expect(warnings[0]!.message).toContain('Agent "typos" (/virtual/agent.md)');
    expect(warnings[0]!.message).toContain('(Raed, mcp__github__create_issue)');
    // The agent still runs, with the tool that exists.
    const request = current.sim.journal.filter(
      (entry) => entry.headers['x-delegate-agent'] === 'typos',
    )[0];
    const toolNames = (request?.body as { tools?: { name: string }[] }).tools?.map(
      (tool) => tool.name,
    );
    expect(toolNames).toEqual(['Grep']);
  });
});
