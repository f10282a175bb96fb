import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Policy } from '@delegate/api-sim';
import type { z } from 'zod';
import type { ApiRun } from '../__fixtures__/api-types.js';
import type { AgentDefinitionsView } from './schemas.js';
import { Gates, scenarioPolicy } from '../__fixtures__/scenario-policy.js';
import { type TestServer, startTestServer, waitForRun } from '../__fixtures__/test-server.js';

type AgentsBody = z.infer<typeof AgentDefinitionsView>;

const ENDED = ['completed', 'failed', 'cancelled', 'interrupted'];

// A workspace agent file that would make every run chosen as it bypass permissions: whatever a
// clone or a branch holds.
const LOOSE_AGENT = [
  '---',
  'name: loose',
  'description: Runs anything.',
  'permissionMode: bypassPermissions',
  'hooks:',
  '  PreToolUse:',
  '    - matcher: Bash',
  '      hooks:',
  '        - type: command',
  "          command: node -e \"require('fs').writeFileSync('main-hook-ran.txt', 'yes')\"",
  '---',
  'You run what you are asked to.',
  '',
].join('\n');

// A workspace sub-agent whose hook would run a program on the server before each Read.
const HOOKED_AGENT = [
  '---',
  'name: hooked',
  'description: Reads files.',
  'tools: Read',
  'hooks:',
  '  PreToolUse:',
  '    - matcher: Read',
  '      hooks:',
  '        - type: command',
  "          command: node -e \"require('fs').writeFileSync('hook-ran.txt', 'yes')\"",
  '---',
  'You read files.',
  '',
].join('\n');

// The main agent hands `hooked` a Read; the sub-agent reads notes.txt and reports.
const scenarios = scenarioPolicy(new Gates());
const hookPolicy: Policy = (request) => {
  if (request.agent === 'hooked')
    return request.toolResults.length > 0
      ? `read: ${request.toolResults[0]?.content}`
      : [{ type: 'tool_use', name: 'Read', input: { file_path: 'notes.txt' } }];
  if (!JSON.stringify(request.messages).includes('scenario:hooked')) return scenarios(request);
  if (request.toolResults.length > 0) return `done: ${request.toolResults[0]?.content}`;
  return [
    {
      type: 'tool_use',
      name: 'Agent',
      input: { description: 'read notes', prompt: 'Read notes.txt', subagent_type: 'hooked' },
    },
  ];
};

async function serverWithLooseAgent(config: { trustWorkspaceAgents?: boolean }) {
  const test = await startTestServer({ policy: hookPolicy, config });
  await mkdir(join(test.workspace, '.claude', 'agents'), { recursive: true });
  await writeFile(join(test.workspace, '.claude', 'agents', 'loose.md'), LOOSE_AGENT);
  await writeFile(join(test.workspace, '.claude', 'agents', 'hooked.md'), HOOKED_AGENT);
  await writeFile(join(test.workspace, 'notes.txt'), 'the notes\n');
  await mkdir(join(test.workspace, '.git'));
  return test;
}

async function runHooked(test: TestServer): Promise<{ run: ApiRun; events: string }> {
  const created = await test.api('/v1/runs', { json: { prompt: 'scenario:hooked' } });
  const { id } = (await created.json()) as { id: string };
  const run = await waitForRun(test, id, (value) => ENDED.includes(value.status));
  const events = await (await test.api(`/v1/runs/${id}/events`)).text();
  return { run, events };
}

async function runAsLoose(test: TestServer): Promise<{ run: ApiRun; events: string }> {
  // The request asks for no permission mode: the agent file alone would loosen it.
  const created = await test.api('/v1/runs', { json: { prompt: 'scenario:bash', agent: 'loose' } });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const run = await waitForRun(test, id, (value) => ENDED.includes(value.status));
  const events = await (await test.api(`/v1/runs/${id}/events`)).text();
  return { run, events };
}

describe('workspace agent files on a server that does not trust them (the default)', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await serverWithLooseAgent({});
  });
  afterAll(() => test.close());

  it('runs a chosen agent without the permission mode its file asks for, and says so in the run', async () => {
    const { run, events } = await runAsLoose(test);
    expect(run.status).toBe('completed');
    // Bash needs approval nobody can give on a server: the command did not run.
    expect(run.result).toMatch(
      /Permission denied: Bash needs approval .*\(permission mode default\)/,
    );
    expect(run.result).not.toMatch(/PATH=/);
    expect(events).toContain('AGENT_FIELD_IGNORED');
    expect(events).toMatch(/loose\.md: hooks not applied: hook commands are programs/);
    expect(existsSync(join(test.workspace, 'main-hook-ran.txt'))).toBe(false);
    expect(events).toMatch(
      /loose\.md: permissionMode not applied: bypassPermissions approves more than a project's own files may set, so the agent runs in the default mode for sub-agents, and this server does not trust workspace agent files \(start the server with --trust-workspace-agents/,
    );
  });

  it("does not run a workspace sub-agent's hook, and says so in the run", async () => {
    const { run, events } = await runHooked(test);
    expect(run.status).toBe('completed');
    expect(run.result).toContain('read: ');
    expect(run.result).toContain('the notes');
    expect(existsSync(join(test.workspace, 'hook-ran.txt'))).toBe(false);
    expect(events).toMatch(/hooked\.md: hooks not applied: hook commands are programs/);
  });

  it('lists the agent with the permission mode it runs with and a warning naming the field', async () => {
    const response = await test.api('/v1/agents');
    const body = (await response.json()) as AgentsBody;
    expect(body.agents.find((agent) => agent.agentType === 'loose')?.permissionMode).toBeNull();
    expect(body.diagnostics).toContainEqual(
      expect.objectContaining({
        filePath: expect.stringMatching(/loose\.md$/),
        severity: 'warning',
        reason: expect.stringMatching(/^permissionMode not applied/),
      }),
    );
  });
});

describe('workspace agent files on a server started with --trust-workspace-agents', () => {
  let test: TestServer;
  beforeAll(async () => {
    test = await serverWithLooseAgent({ trustWorkspaceAgents: true });
  });
  afterAll(() => test.close());

  it("runs a workspace sub-agent's hook", async () => {
    const { run } = await runHooked(test);
    expect(run.status).toBe('completed');
    expect(run.result).toContain('the notes');
    expect(existsSync(join(test.workspace, 'hook-ran.txt'))).toBe(true);
  });

  it('applies the permission mode and the hooks the file asks for', async () => {
    const { run, events } = await runAsLoose(test);
    expect(run.status).toBe('completed');
    expect(run.result).toMatch(/^Environment: .*PATH=/s);
    // The chosen agent runs as the main agent: its PreToolUse hook ran before its Bash call.
    expect(existsSync(join(test.workspace, 'main-hook-ran.txt'))).toBe(true);
    expect(events).not.toContain('AGENT_FIELD_IGNORED');
    const agents = (await (await test.api('/v1/agents')).json()) as AgentsBody;
    expect(agents.agents.find((agent) => agent.agentType === 'loose')?.permissionMode).toBe(
      'bypassPermissions',
    );
  });

  it('names the agent file when a hook of the chosen agent cannot run', async () => {
    const file = join(test.workspace, '.claude', 'agents', 'badhook.md');
    await writeFile(
      file,
      [
        '---',
        'name: badhook',
        'description: Has a hook of a kind Delegate does not run.',
        'hooks:',
        '  PreToolUse:',
        '    - matcher: Bash',
        '      hooks:',
        '        - type: prompt',
        '          prompt: Is this call safe?',
        '---',
        'You work.',
      ].join('\n'),
    );
    const created = await test.api('/v1/runs', { json: { prompt: 'hi', agent: 'badhook' } });
    const { id } = (await created.json()) as { id: string };
    const run = await waitForRun(test, id, (value) => ENDED.includes(value.status));
    expect(run.status).toBe('failed');
    expect(run.error?.code).toBe('INVALID_AGENT_DEFINITION');
    expect(run.error?.message).toContain(
      `agent "badhook" (${file}): hooks.PreToolUse[0].hooks[0].type:`,
    );
    expect(run.error?.message).not.toContain('mainAgentHooks');
  });

  it('refuses a chosen agent that requires MCP servers, and says which parts of a chosen agent do not run', async () => {
    const agents = join(test.workspace, '.claude', 'agents');
    await writeFile(
      join(agents, 'needs-jira.md'),
      [
        '---',
        'name: needs-jira',
        'description: Files tickets.',
        'requiredMcpServers: [jira]',
        '---',
        'You file tickets.',
      ].join('\n'),
    );
    const refused = await test.api('/v1/runs', { json: { prompt: 'hi', agent: 'needs-jira' } });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as {
      error: { code: string; message: string; field?: string };
    };
    expect(body.error.code).toBe('MCP_SERVERS_MISSING');
    expect(body.error.field).toBe('agent');
    expect(body.error.message).toMatch(
      /needs-jira\.md\) requires MCP servers matching jira; this server starts no MCP servers/,
    );
    const extras = join(agents, 'extras.md');
    await writeFile(
      extras,
      [
        '---',
        'name: extras',
        'description: Asks for parts the server does not run.',
        'mcpServers: [github]',
        'skills: [triage]',
        'hooks:',
        '  Stop:',
        '    - hooks: [{ type: command, command: "true" }]',
        '---',
        'You work.',
      ].join('\n'),
    );
    const created = await test.api('/v1/runs', { json: { prompt: 'hi', agent: 'extras' } });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const run = await waitForRun(test, id, (value) => ENDED.includes(value.status));
    expect(run.status).toBe('completed');
    const events = await (await test.api(`/v1/runs/${id}/events`)).text();
    const where = `agent \\"extras\\" (${extras})`;
    expect(events).toContain(`${where}: mcpServers not applied: this server starts no MCP servers`);
    expect(events).toContain(
      `${where}: skills not applied: Delegate does not load skills (triage)`,
    );
    expect(events).toContain(`${where}: hooks for Stop not applied`);
  });
});
