import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { parseAgentFromMarkdown } from '@delegate/agent-defs';
import { type McpManager, createMcpManager } from '@delegate/tools';
import { agentCall, customAgent, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

const server = fileURLToPath(
  new URL('../../../tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
);

let current: TestSession | undefined;
let manager: McpManager | undefined;

afterEach(async () => {
  await current?.cleanup();
  await manager?.close();
  manager = undefined;
  current = undefined;
});

describe('required MCP servers', () => {
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
});

describe('agents that need MCP servers', () => {
  it('waits for a connecting server, then the agent uses its tools', async () => {
    const parsed = parseAgentFromMarkdown({
      filePath: '/virtual/calculator.md',
      baseDir: '/virtual',
      source: 'projectSettings',
      content:
        '---\nname: calculator\ndescription: Adds numbers with the calc server\nrequiredMcpServers: [calc]\n---\nYou add numbers with your tools.',
    });
    if (!parsed.ok) throw new Error(parsed.diagnostic.reason);
    manager = createMcpManager({
      servers: { calc: { command: process.execPath, args: [server] } },
    });
    expect(manager.getClients()).toEqual([
      expect.objectContaining({ name: 'calc', type: 'pending' }),
    ]);
    current = await createTestSession({
      agents: [parsed.agent],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [
            agentCall({
              description: 'add',
              prompt: 'What is 2 + 3?',
              subagent_type: 'calculator',
            }),
          ],
        },
        {
          match: { agent: 'calculator', toolResult: false },
          reply: [{ type: 'tool_use', name: 'mcp__calc__add', input: { a: 2, b: 3 } }],
        },
        {
          match: { agent: 'calculator' },
          reply: (request) => `The sum is ${request.toolResults[0]?.content}.`,
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => request.toolResults[0]?.content ?? '',
        },
      ]),
      session: { mcp: manager, mcpPollMs: 20, permissionMode: 'bypassPermissions' },
    });
    const { text } = await current.session.send('add two numbers');
    expect(text).toContain('The sum is 5.');
    const calculatorRequest = current.sim.journal.filter(
      (entry) => entry.headers['x-delegate-agent'] === 'calculator',
    )[0]!;
    expect(
      (calculatorRequest.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name),
    ).toContain('mcp__calc__add');
  });
});

describe('required MCP servers, by their configured names', () => {
  // Tool names spell `acme.tools` as `acme_tools` and cannot tell where `gh__ent` ends.
  const needs = (name: string, pattern: string) =>
    customAgent(
      `---\nname: ${name}\ndescription: Needs ${pattern}\nrequiredMcpServers: [${JSON.stringify(pattern)}]\n---\nYou use it.`,
    );

  it.each([
    ['needs-dot', 'acme.tools'],
    ['needs-ent', 'ent'],
  ])('start %s, which requires %s', async (agentType, pattern) => {
    manager = createMcpManager({
      servers: {
        'acme.tools': { command: process.execPath, args: [server] },
        gh__ent: { command: process.execPath, args: [server] },
      },
    });
    await manager.whenSettled();
    current = await createTestSession({
      agents: [needs(agentType, pattern)],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'x', subagent_type: agentType })],
        },
        { match: { agent: agentType }, reply: 'the agent ran' },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `GOT ${resultText(request)}`,
        },
      ]),
      session: { mcp: manager, transcriptDir: false },
    });
    const { text } = await current.session.send('go');
    expect(text).toContain('the agent ran');
  });

  it('name the configured servers when a requirement is not met', async () => {
    manager = createMcpManager({
      servers: { 'acme.tools': { command: process.execPath, args: [server] } },
    });
    await manager.whenSettled();
    current = await createTestSession({
      agents: [needs('needs-db', 'db')],
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'x', subagent_type: 'needs-db' })],
        },
        {
          match: { when: isMain, toolResult: 'Agent' },
          reply: (request) => `GOT ${resultText(request)}`,
        },
      ]),
      session: { mcp: manager, transcriptDir: false, mcpWaitMs: 0 },
    });
    const { text } = await current.session.send('go');
    expect(text).toContain(
      'requires MCP servers matching: db. MCP servers with tools: acme.tools.',
    );
  });
});
