import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import type { AgentEvent, Tool } from '@delegate/core';
import {
  agentCall,
  agentOf,
  customAgent,
  isMain,
  requestBody,
} from '../__fixtures__/sim-helpers.js';
import { createMcpManager } from '@delegate/tools';
import { type TestSession, createTestSession, waitUntil } from '../__fixtures__/test-session.js';
import { readInlineMcpServers, withoutDisallowed } from './agent-mcp-servers.js';

// The stdio MCP server of the tools package's tests: `echo`, `add`, `fail`, `greet.user`.
const SERVER = fileURLToPath(
  new URL('../../../tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
);

/** Processes running the test server (not zombies). */
function serverProcesses(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmdline.includes(SERVER) && state !== 'Z') found.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/** The `with-mcp` agent, with these `mcpServers` lines and other frontmatter `fields`. */
/** `mcpServers` lines of the test server, as `echo`. */
const ECHO_SERVER = ['  - echo:', '      command: node', `      args: [${JSON.stringify(SERVER)}]`];

/** The main agent's rules: it starts `with-mcp` with `prompt`, then answers `main done`. */
function mainStartsWithMcp(prompt: string): Parameters<typeof rules>[0] {
  return [
    {
      match: { when: isMain, toolResult: false },
      reply: [agentCall({ description: 'use it', prompt, subagent_type: 'with-mcp' })],
    },
    { match: { when: isMain }, reply: 'main done' },
  ];
}

function agentWithServers(
  servers: string[],
  fields: string[] = ['tools: Read'],
): ReturnType<typeof customAgent> {
  return customAgent(
    [
      '---',
      'name: with-mcp',
      'description: uses its own MCP server',
      ...fields,
      'mcpServers:',
      ...servers,
      '---',
      'You use your own server.',
    ].join('\n'),
  );
}

let current: TestSession | undefined;
afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('withoutDisallowed', () => {
  it('removes a tool by name, and a whole server as mcp__s or mcp__s__*', () => {
    const tools = ['mcp__echo__add', 'mcp__echo__echo', 'mcp__echo2__add', 'mcp__db__query'].map(
      (name) => ({ name }) as Tool,
    );
    const left = (disallowed: string[]) =>
      withoutDisallowed(tools, disallowed).map((tool) => tool.name);
    expect(left(['mcp__echo__add'])).toEqual([
      'mcp__echo__echo',
      'mcp__echo2__add',
      'mcp__db__query',
    ]);
    for (const server of ['mcp__echo', 'mcp__echo__*'])
      expect(left([server])).toEqual(['mcp__echo2__add', 'mcp__db__query']);
  });
});

describe("an agent's own MCP servers (defined inline in its file)", () => {
  it('start for its run, give it their tools beside its own, and stop when the run ends', async () => {
    let runningDuringCall = 0;
    current = await createTestSession({
      policy: rules([
        ...mainStartsWithMcp('echo'),
        {
          match: { agent: 'with-mcp', toolResult: false },
          reply: () => {
            runningDuringCall = serverProcesses().length;
            return [
              { type: 'tool_use', name: 'mcp__echo__echo', input: { text: 'from the server' } },
            ];
          },
        },
        {
          match: { agent: 'with-mcp' },
          reply: (request) => `echoed: ${JSON.stringify(request.toolResults)}`,
        },
      ]),
      agents: [
        agentWithServers(
          ECHO_SERVER,
          // Naming a tool of its own server is no mistake; disallowing one removes it.
          ['tools: Read, mcp__echo__echo', 'disallowedTools: mcp__echo__add'],
        ),
      ],
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('go');

    const first = current.sim.journal.entries.find((entry) => agentOf(entry) === 'with-mcp')!;
    const tools = (requestBody(first).tools ?? []).map((tool) => tool.name);
    // Its own `tools: Read` list, and its server's tools (the list does not filter them).
    expect(tools).toEqual(
      expect.arrayContaining([
        'Read',
        'mcp__echo__echo',
        'mcp__echo__fail',
        'mcp__echo__greet_user',
      ]),
    );
    expect(tools).not.toContain('Bash');
    expect(tools).not.toContain('mcp__echo__add');
    expect(runningDuringCall).toBe(1);
    const last = current.sim.journal.entries
      .filter((entry) => agentOf(entry) === 'with-mcp')
      .at(-1)!;
    expect(JSON.stringify(requestBody(last).messages.at(-1))).toContain('from the server');
    expect(events.filter((event) => event.type === 'agent.warning')).toEqual([]);
    // Stopped with the run, not with the session (flush waits for it to exit).
    await current.session.flush();
    expect(serverProcesses()).toEqual([]);
  });

  it('warn about a server that cannot start or is not a stdio server, and run the agent without it', async () => {
    current = await createTestSession({
      policy: rules([
        ...mainStartsWithMcp('go'),
        { match: { agent: 'with-mcp' }, reply: 'ran without them' },
      ]),
      agents: [
        agentWithServers([
          '  - missing:',
          '      command: /nonexistent/delegate-mcp-server',
          '  - remote:',
          '      type: sse',
          '      url: https://example.com/mcp',
          '  - broken:',
          '      args: [x]',
        ]),
      ],
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('go');
    const warnings = events.flatMap((event) => (event.type === 'agent.warning' ? [event] : []));
    expect(warnings.map((warning) => [warning.code, warning.message])).toEqual(
      expect.arrayContaining([
        ['MCP_SERVERS_IGNORED', expect.stringMatching(/"remote" inline.*sse server.*only stdio/)],
        ['MCP_SERVERS_IGNORED', expect.stringMatching(/"broken" inline.*`command`/)],
        ['MCP_SERVER_FAILED', expect.stringMatching(/could not start its MCP server "missing"/)],
      ]),
    );
    expect(warnings).toHaveLength(3);
    const tail = current.sim.journal.entries.filter((entry) => agentOf(entry) === 'with-mcp');
    expect(tail).toHaveLength(1);
    expect((requestBody(tail[0]!).tools ?? []).map((tool) => tool.name)).toEqual(['Read']);
  });

  it('start again for each later run of the agent (here a resume), and stop after it', async () => {
    const serversPerCall: number[] = [];
    current = await createTestSession({
      policy: rules([
        {
          // Not on the resumed agent's notification: that gets a plain answer.
          match: {
            when: (request) =>
              isMain(request) && !request.lastUserText.includes('<task-notification>'),
            toolResult: false,
          },
          reply: [agentCall({ description: 'use it', prompt: 'echo', subagent_type: 'with-mcp' })],
        },
        { match: { when: isMain }, reply: 'main done' },
        {
          match: { agent: 'with-mcp', toolResult: false },
          reply: () => {
            serversPerCall.push(serverProcesses().length);
            return [{ type: 'tool_use', name: 'mcp__echo__echo', input: { text: 'again' } }];
          },
        },
        { match: { agent: 'with-mcp' }, reply: 'echoed' },
      ]),
      agents: [agentWithServers(ECHO_SERVER)],
    });
    const events: AgentEvent[] = [];
    current.session.events.on((event) => events.push(event));
    await current.session.send('go');
    const started = events.find(
      (event) => event.type === 'agent.started' && event.agentType === 'with-mcp',
    )!;
    await current.session.flush();
    expect(serverProcesses()).toEqual([]);
    await current.session.resumeAgent({ agentId: started.agentId, message: 'once more' });
    await current.session.send('', { waitForBackground: true });
    await current.session.flush();
    expect(serversPerCall).toEqual([1, 1]);
    expect(serverProcesses()).toEqual([]);
  });

  it('stop with session.close() while the agent is still running', async () => {
    current = await createTestSession({
      policy: rules([
        ...mainStartsWithMcp('echo'),
        // Its first answer takes longer than the test: the run is still going at close().
        {
          match: { agent: 'with-mcp' },
          reply: () => new Promise((resolve) => setTimeout(() => resolve('late'), 20_000)),
        },
      ]),
      agents: [agentWithServers(ECHO_SERVER)],
    });
    const sent = current.session.send('go').catch(() => undefined);
    await waitUntil(() => serverProcesses().length === 1);
    expect(serverProcesses()).toHaveLength(1);
    await current.session.close();
    expect(serverProcesses()).toEqual([]);
    await sent;
  });

  it("refuse a call the session's deny rules refuse, as for any tool", async () => {
    current = await createTestSession({
      policy: rules([
        ...mainStartsWithMcp('echo'),
        {
          match: { agent: 'with-mcp', toolResult: false },
          reply: [{ type: 'tool_use', name: 'mcp__echo__echo', input: { text: 'blocked?' } }],
        },
        { match: { agent: 'with-mcp' }, reply: (request) => JSON.stringify(request.toolResults) },
      ]),
      session: { denyRules: ['mcp__echo__echo'] },
      agents: [agentWithServers(ECHO_SERVER)],
    });
    await current.session.send('go');
    const last = current.sim.journal.entries
      .filter((entry) => agentOf(entry) === 'with-mcp')
      .at(-1)!;
    const result = JSON.stringify(requestBody(last).messages.at(-1));
    expect(result).toContain('mcp__echo__echo is denied by the rule mcp__echo__echo');
  });

  it("are not started when they would be named like a session server's tools, and a warning says so", async () => {
    // The session's `echo.1` and the agent's `echo_1` both give tools named `mcp__echo_1__…`.
    const manager = createMcpManager({
      servers: { 'echo.1': { command: process.execPath, args: [SERVER] } },
    });
    await manager.whenSettled();
    let runningDuringCall = 0;
    try {
      current = await createTestSession({
        policy: rules([
          ...mainStartsWithMcp('echo'),
          {
            match: { agent: 'with-mcp', toolResult: false },
            reply: () => {
              runningDuringCall = serverProcesses().length;
              return [{ type: 'tool_use', name: 'mcp__echo_1__echo', input: { text: 'x' } }];
            },
          },
          { match: { agent: 'with-mcp' }, reply: 'done' },
        ]),
        session: { mcp: manager },
        agents: [
          agentWithServers(
            ['  - echo_1:', '      command: node', `      args: [${JSON.stringify(SERVER)}]`],
            [],
          ),
        ],
      });
      const events: AgentEvent[] = [];
      current.session.events.on((event) => events.push(event));
      await current.session.send('go');
      const warnings = events.flatMap((event) => (event.type === 'agent.warning' ? [event] : []));
      expect(warnings.map((warning) => [warning.code, warning.message])).toEqual([
        [
          'MCP_SERVERS_IGNORED',
          expect.stringMatching(
            /defines MCP server "echo_1" inline, which is not started: its tools would be named like those of the session's server "echo\.1" \(mcp__echo_1__…\)/,
          ),
        ],
      ]);
      // Only the session's server runs: the agent's calls went there, as its warning says.
      expect(runningDuringCall).toBe(1);
    } finally {
      await current?.cleanup();
      current = undefined;
      await manager.close();
    }
  });

  it('are read as Claude Code writes them: numbers and booleans in args and env become text', () => {
    const agent = agentWithServers([
      '  - github',
      '  - local:',
      '      command: my-server',
      '      args: [--port, 8080]',
      '      env: { DEBUG: true, LEVEL: 3 }',
      '  - odd: just text',
      '  - list:',
      '      command: x',
      '      args: { a: 1 }',
    ]);
    const { servers, warnings } = readInlineMcpServers(agent, new Set(['github']));
    expect(servers).toEqual({
      local: { command: 'my-server', args: ['--port', '8080'], env: { DEBUG: 'true', LEVEL: '3' } },
    });
    expect(warnings.map((warning) => warning.message)).toEqual([
      expect.stringMatching(/"odd" inline, which is not started: it is not a server definition/),
      expect.stringMatching(
        /"list" inline, which is not started: its `args` is not a list of words/,
      ),
    ]);
  });
});
