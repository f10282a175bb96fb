import { afterEach, describe, expect, it } from 'vitest';
import { rules } from '@delegate/api-sim';
import { agentCall, customAgent, isMain, resultText } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';

let current: TestSession | undefined;

afterEach(async () => {
  await current?.cleanup();
  current = undefined;
});

describe('what a call starts', () => {
  it('refuses to nest deeper than maxDepth', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'x', subagent_type: 'general-purpose' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
      session: { maxDepth: 0 },
    });
    const { text } = await current.session.send('spawn');
    expect(text).toContain('Sub-agents may nest 0 levels deep');
  });

  it('says that forking is off when a call names "fork" in a session without forkEnabled', async () => {
    current = await createTestSession({
      policy: rules([
        {
          match: { when: isMain, toolResult: false },
          reply: [agentCall({ description: 'x', prompt: 'x', subagent_type: 'fork' })],
        },
        { match: { when: isMain, toolResult: 'Agent' }, reply: (request) => resultText(request) },
      ]),
    });
    const { text } = await current.session.send('fork');
    expect(text).toContain('Forking is off in this session (the session option forkEnabled)');
    expect(text).toContain('Available agents: general-purpose, Explore, Plan.');
    expect(
      current.sim.journal.filter((entry) => entry.headers['x-delegate-agent'] !== undefined),
    ).toEqual([]);
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
});
