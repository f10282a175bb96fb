import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Policy } from '@delegate/api-sim';
import { DelegateError } from '@delegate/core';
import { type McpManager, createMcpManager } from '@delegate/tools';
import { type TestSession, createTestSession } from '../__fixtures__/test-session.js';
import type { DelegateSessionOptions } from './session-options.js';
import { validateSessionOptions } from './session-options.js';

// The stdio MCP server of the tools package's tests: `echo` (read-only), `add`, `fail`, `greet.user`.
const SERVER = fileURLToPath(
  new URL('../../../tools/src/__fixtures__/mcp-test-server.mjs', import.meta.url),
);

// The main agent calls the tool the prompt names (`<tool> <JSON input>`), then reports its result.
const callFromPrompt: Policy = (request) => {
  const result = request.toolResults[0];
  if (result) return `${result.isError ? 'ERROR' : 'OK'}: ${result.content}`;
  // The prompt's line, after the agent list the first request carries.
  const text = request.lastUserText.trim().split('\n').at(-1) ?? '';
  const space = text.indexOf(' ');
  return [
    { type: 'tool_use', name: text.slice(0, space), input: JSON.parse(text.slice(space + 1)) },
  ];
};

let current: TestSession | undefined;
let manager: McpManager | undefined;
afterEach(async () => {
  await current?.cleanup();
  await manager?.close();
  current = undefined;
  manager = undefined;
});

/** A session whose MCP servers `echo` and `other` (both the test server) have connected. */
async function sessionWithServers(options: Partial<DelegateSessionOptions>): Promise<TestSession> {
  manager = createMcpManager({
    servers: {
      echo: { command: process.execPath, args: [SERVER] },
      other: { command: process.execPath, args: [SERVER] },
    },
  });
  await manager.whenSettled();
  current = await createTestSession({
    policy: callFromPrompt,
    session: { mcp: manager, transcriptDir: false, ...options },
  });
  return current;
}

describe('permission rules naming a whole MCP server', () => {
  it.each(['mcp__echo', 'mcp__echo__*'])(
    'deny rule %s refuses every tool of that server, in every mode, and no other server',
    async (rule) => {
      const { session } = await sessionWithServers({
        denyRules: [rule],
        permissionMode: 'bypassPermissions',
      });
      expect((await session.send('mcp__echo__echo {"text":"hi"}')).text).toBe(
        `ERROR: Permission denied: mcp__echo__echo is denied by the rule ${rule} from session.`,
      );
      expect((await session.send('mcp__echo__add {"a":1,"b":2}')).text).toContain(
        `is denied by the rule ${rule}`,
      );
      expect((await session.send('mcp__other__echo {"text":"hi"}')).text).toBe('OK: hi');
    },
  );

  it('an allow rule approves every tool of the server without asking', async () => {
    const denied = await sessionWithServers({});
    // `add` changes things (it is not read-only): in default mode it needs approval.
    expect((await denied.session.send('mcp__echo__add {"a":1,"b":2}')).text).toContain(
      'needs approval and no one can be asked',
    );
    await current?.cleanup();
    await manager?.close();
    const { session } = await sessionWithServers({ allowRules: ['mcp__echo'] });
    expect((await session.send('mcp__echo__add {"a":1,"b":2}')).text).toBe('OK: 3');
    expect((await session.send('mcp__other__add {"a":1,"b":2}')).text).toContain('needs approval');
  });

  it('an ask rule puts every call to the server to the person', async () => {
    const asked: string[] = [];
    const { session } = await sessionWithServers({
      askRules: ['mcp__echo__*'],
      permissionMode: 'bypassPermissions',
      ask: async ({ tool, message }) => {
        asked.push(`${tool.name}: ${message}`);
        return { behavior: 'deny', message: 'not now' };
      },
    });
    // `echo` is read-only, and the mode allows everything: only the ask rule asks.
    expect((await session.send('mcp__echo__echo {"text":"hi"}')).text).toContain('not now');
    expect((await session.send('mcp__other__echo {"text":"hi"}')).text).toBe('OK: hi');
    expect(asked).toEqual([
      'mcp__echo__echo: mcp__echo__echo matches the ask rule mcp__echo__* from session.',
    ]);
  });
});

describe('permission rules that can match no tool', () => {
  const failure = (options: Partial<DelegateSessionOptions>): string => {
    try {
      validateSessionOptions({ cwd: '/repo', ...options });
    } catch (error) {
      if (DelegateError.isInstance(error)) return error.message;
      throw error;
    }
    return 'accepted';
  };

  it('are refused with the reason, while the whole-server forms are taken', () => {
    expect(failure({ denyRules: ['mcp__echo', 'mcp__echo__*', 'mcp__echo__*()'] })).toBe(
      'accepted',
    );
    expect(failure({ denyRules: ['mcp__*'] })).toMatch(
      /options\.denyRules\[0\]: "mcp__\*" is not a permission rule \("mcp__\*" has a wildcard, which matches no tool name: .*"mcp__<server>__\*"/,
    );
    expect(failure({ allowRules: ['Bash*'] })).toMatch(/"Bash\*" has a wildcard/);
    expect(failure({ askRules: ['mcp__echo__ec*'] })).toMatch(/"mcp__echo__ec\*" has a wildcard/);
    expect(failure({ denyRules: ['mcp__echo__*(rm -rf)'] })).toMatch(
      /"mcp__echo__\*" names every tool of an MCP server and takes no content/,
    );
    expect(failure({ denyRules: [{ toolName: 'mcp__echo__*', ruleContent: 'x' }] })).toMatch(
      /options\.denyRules\[0\]: "mcp__echo__\*" names every tool of an MCP server/,
    );
    expect(failure({ denyRules: [{ toolName: 'mcp__*' }] })).toMatch(
      /options\.denyRules\[0\]\.toolName: "mcp__\*" is not a tool name/,
    );
  });
});
