import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Policy } from '@delegate/api-sim';
import { type McpManager, createMcpManager } from '@delegate/tools';
import { agentOf, requestBody } from '../__fixtures__/sim-helpers.js';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import type { DelegateSessionOptions } from './session-options.js';

// The stdio MCP server of the tools package's tests: `echo`, `add`, `fail`, `greet.user`.
const SERVER = fileURLToPath(
  new URL('../../../tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
);

// The main agent calls the tool its prompt names (`<tool> <JSON input>`) and reports the
// result; a sub-agent answers at once.
const callFromPrompt: Policy = (request) => {
  if (request.agent !== undefined) return 'sub-agent done';
  const result = request.toolResults[0];
  if (result) return `${result.isError ? 'ERROR' : 'OK'}: ${result.content}`;
  const text = request.lastUserText.trim().split('\n').at(-1) ?? '';
  const space = text.indexOf(' ');
  return [
    { type: 'tool_use', name: text.slice(0, space), input: JSON.parse(text.slice(space + 1)) },
  ];
};

const SESSION_TOOLS = ['Agent', 'TaskOutput', 'TaskStop', 'SendMessage'];

let current: TestSession | undefined;
let manager: McpManager | undefined;
afterEach(async () => {
  await current?.cleanup();
  await manager?.close();
  current = undefined;
  manager = undefined;
});

/** A session with the MCP servers `echo` and `other`, settled unless `settled` is false. */
async function sessionWithServers(
  options: Partial<DelegateSessionOptions>,
  settled = true,
): Promise<TestSession> {
  manager = createMcpManager({
    servers: {
      echo: { command: process.execPath, args: [SERVER] },
      other: { command: process.execPath, args: [SERVER] },
    },
  });
  if (settled) await manager.whenSettled();
  current = await createTestSession({
    policy: callFromPrompt,
    session: {
      mcp: manager,
      transcriptDir: false,
      permissionMode: 'bypassPermissions',
      ...options,
    },
  });
  return current;
}

/** Tool names of the main agent's requests, one list per request. */
function mainRequestTools(test: TestSession): string[][] {
  return test.sim.journal.entries
    .filter((entry) => agentOf(entry) === undefined)
    .map((entry) => (requestBody(entry).tools ?? []).map((tool) => tool.name));
}

describe('mainAgentTools (the lists of the definition the main thread runs as)', () => {
  it('disallowedTools removes a whole MCP server from the main agent, not from its sub-agents', async () => {
    const test = await sessionWithServers({ mainAgentTools: { disallowedTools: ['mcp__echo'] } });
    const { text } = await test.session.send('mcp__echo__echo {"text":"hi"}');
    expect(text).toMatch(/^ERROR: .*mcp__echo__echo/);
    const [first] = mainRequestTools(test);
    expect(first).toContain('mcp__other__echo');
    expect(first?.filter((name) => name.startsWith('mcp__echo__'))).toEqual([]);
    expect(first).toEqual(expect.arrayContaining(['Read', 'Bash', ...SESSION_TOOLS]));
    // A sub-agent's pool is assembled as before: it still gets the server.
    await test.session.send(
      'Agent {"description":"look","prompt":"look","subagent_type":"general-purpose"}',
    );
    const sub = test.sim.journal.entries.find((entry) => agentOf(entry) === 'general-purpose');
    expect((requestBody(sub!).tools ?? []).map((tool) => tool.name)).toContain('mcp__echo__echo');
  });

  it('tools keeps only the tools it names, MCP tools included, beside the session tools', async () => {
    const test = await sessionWithServers({
      mainAgentTools: { tools: ['Read', 'mcp__other__add'] },
    });
    expect((await test.session.send('mcp__other__add {"a":1,"b":2}')).text).toBe('OK: 3');
    expect((await test.session.send('mcp__echo__echo {"text":"hi"}')).text).toMatch(/^ERROR/);
    expect(mainRequestTools(test)[0]).toEqual(['Read', 'mcp__other__add', ...SESSION_TOOLS]);
  });

  it('applies to the tools of servers that connect after the session was created', async () => {
    const test = await sessionWithServers(
      { mainAgentTools: { tools: ['Read'], disallowedTools: ['mcp__other__*'] } },
      false,
    );
    await manager!.whenSettled();
    await test.session.send('mcp__echo__echo {"text":"hi"}');
    expect(test.session.context.options.tools.map((tool) => tool.name)).toEqual([
      'Read',
      ...SESSION_TOOLS,
    ]);
    for (const tools of mainRequestTools(test)) expect(tools).toEqual(['Read', ...SESSION_TOOLS]);
    // The servers' tools are still the session's, for its sub-agents.
    expect(test.session.context.getAppState().mcp.tools.length).toBeGreaterThan(0);
  });
});
