import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { McpClientState, Tool } from '@delegate/core';
import { waitUntil } from './__fixtures__/process-liveness.js';
import { createTestContext, testExtras } from './__fixtures__/test-context.js';
import { type McpManager, type McpSnapshot, createMcpManager } from './mcp-manager.js';
import { buildMcpToolName, normalizeMcpName } from './mcp-tool-name.js';
import { toolToApiSchema } from './tool-to-api-schema.js';

const serverScript = fileURLToPath(new URL('./__fixtures__/mcp-test-server.mjs', import.meta.url));
const exitScript = fileURLToPath(new URL('./__fixtures__/mcp-exit-server.mjs', import.meta.url));
const listedScript = fileURLToPath(
  new URL('./__fixtures__/mcp-listed-tools-server.mjs', import.meta.url),
);
const apiToolName = /^[a-zA-Z0-9_-]{1,128}$/;

/** A server listing `tools` (see mcp-listed-tools-server.mjs for `<repeat:C:N>`). */
function listedServer(tools: Array<Record<string, unknown>>) {
  return {
    command: process.execPath,
    args: [listedScript],
    env: { TOOLS: JSON.stringify(tools) },
  };
}
const objectSchema = { type: 'object', properties: {} };

let manager: McpManager | undefined;
afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

function findTool(tools: Tool[], name: string): Tool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined)
    throw new Error(`missing tool ${name}; have ${tools.map((each) => each.name).join(', ')}`);
  return tool;
}

describe('createMcpManager', () => {
  it('starts pending, then connects and exposes mcp__server__tool tools', async () => {
    const snapshots: McpSnapshot[] = [];
    manager = createMcpManager({
      servers: { 'test server': { command: process.execPath, args: [serverScript] } },
      onChange: (snapshot) => snapshots.push(snapshot),
    });
    expect(manager.getClients()).toEqual([{ name: 'test server', type: 'pending' }]);
    expect(manager.getTools()).toEqual([]);
    const clients = await manager.whenSettled();
    expect(clients).toEqual([{ name: 'test server', type: 'connected' }]);
    expect(snapshots.at(-1)?.clients).toEqual(clients);

    const tools = manager.getTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'mcp__test_server__add',
      'mcp__test_server__echo',
      'mcp__test_server__fail',
      'mcp__test_server__greet_user',
    ]);
    const echo = findTool(tools, 'mcp__test_server__echo');
    expect(echo.isMcp).toBe(true);
    expect(echo.isReadOnly()).toBe(true);
    expect(findTool(tools, 'mcp__test_server__add').isReadOnly()).toBe(false);
    const schema = await toolToApiSchema(echo);
    expect(schema.description).toBe('Returns the text it is given.');
    expect(schema.input_schema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
  });

  it('forwards calls to the server and maps results and errors', async () => {
    manager = createMcpManager({
      servers: { test: { command: process.execPath, args: [serverScript] } },
    });
    await manager.whenSettled();
    const tools = manager.getTools();
    const context = createTestContext({ cwd: process.cwd() });

    const echoed = await findTool(tools, 'mcp__test__echo').call(
      { text: 'hi there' },
      context,
      testExtras,
    );
    expect(echoed).toMatchObject({ content: 'hi there' });
    expect(echoed.isError).toBeUndefined();

    const sum = await findTool(tools, 'mcp__test__add').call({ a: 2, b: 40 }, context, testExtras);
    expect(sum.content).toBe('42');

    const failed = await findTool(tools, 'mcp__test__fail').call({}, context, testExtras);
    expect(failed.isError).toBe(true);
    expect(failed.content).toContain('this tool always fails');

    const invalid = await findTool(tools, 'mcp__test__add').call({ a: 'two' }, context, testExtras);
    expect(invalid.isError).toBe(true);

    const greeted = await findTool(tools, 'mcp__test__greet_user').call(
      { name: 'Ada' },
      context,
      testExtras,
    );
    expect(greeted.content).toBe('Hello, Ada!\n[image content: image/png]');
  });

  it('marks a missing binary and a server that exits at once as failed, while others connect', async () => {
    manager = createMcpManager({
      servers: {
        good: { command: process.execPath, args: [serverScript] },
        missing: { command: '/nonexistent/mcp-server-binary' },
        crashing: { command: process.execPath, args: [exitScript] },
      },
      connectTimeoutMs: 10_000,
    });
    const clients = await manager.whenSettled();
    const byName = Object.fromEntries(clients.map((client) => [client.name, client])) as Record<
      string,
      McpClientState
    >;
    expect(byName['good']?.type).toBe('connected');
    expect(byName['missing']?.type).toBe('failed');
    expect(byName['missing']?.error).toContain('/nonexistent/mcp-server-binary');
    expect(byName['crashing']?.type).toBe('failed');
    expect(byName['crashing']?.error).toContain('missing API token');
    expect(manager.getTools().every((tool) => tool.name.startsWith('mcp__good__'))).toBe(true);
  });

  it('fails a server that does not answer within the connect timeout', async () => {
    manager = createMcpManager({
      servers: {
        silent: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] },
      },
      connectTimeoutMs: 300,
    });
    const [client] = await manager.whenSettled();
    expect(client?.type).toBe('failed');
    expect(client?.error).toMatch(/timed out after 300 ms/);
  });
});

describe('createMcpManager after connecting', () => {
  it('marks a server that exits later as failed and drops its tools', async () => {
    const snapshots: McpSnapshot[] = [];
    manager = createMcpManager({
      servers: {
        flaky: { command: process.execPath, args: [serverScript], env: { EXIT_AFTER_MS: '300' } },
      },
      onChange: (snapshot) => snapshots.push(snapshot),
    });
    expect((await manager.whenSettled())[0]?.type).toBe('connected');
    expect(manager.getTools().length).toBeGreaterThan(0);
    const current = manager;
    expect(await waitUntil(() => current.getClients()[0]?.type === 'failed')).toBe(true);
    expect(manager.getClients()[0]?.error).toContain('closed its connection');
    expect(manager.getTools()).toEqual([]);
    expect(snapshots.at(-1)?.tools).toEqual([]);
  });
});

describe('MCP tool names', () => {
  it('normalizes server and tool names to [a-zA-Z0-9_-]', () => {
    expect(normalizeMcpName('my server.v2/beta')).toBe('my_server_v2_beta');
    expect(buildMcpToolName('git-hub', 'list.issues')).toBe('mcp__git-hub__list_issues');
  });
});

describe('createMcpManager with a hostile server', () => {
  const hostileScript = fileURLToPath(
    new URL('./__fixtures__/mcp-hostile-server.mjs', import.meta.url),
  );

  it('keeps names unique when they collide after normalization, and routes each call to its own tool', async () => {
    manager = createMcpManager({
      servers: { evil: { command: process.execPath, args: [hostileScript] } },
    });
    await manager.whenSettled();
    const tools = manager.getTools();
    const names = tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    // Tools from the second page of tools/list are there too; the duplicate a_b is not.
    expect(names).toContain('mcp__evil__flood');
    expect(names.filter((name) => name.startsWith('mcp__evil__a_b'))).toHaveLength(3);
    // The name that needed no normalization keeps the plain form.
    const context = createTestContext({ cwd: process.cwd() });
    const plain = await findTool(tools, 'mcp__evil__a_b').call({}, context, testExtras);
    expect(plain.content).toBe('called a_b');
    const dotted = tools.find(
      (tool) => tool.name.startsWith('mcp__evil__a_b_') && tool.description() === 'dotted',
    );
    expect(dotted).toBeDefined();
    expect((await dotted?.call({}, context, testExtras))?.content).toBe('called a.b');
  });

  it('caps a huge result and a huge description, and times out a call that hangs', async () => {
    // The time limit must leave room for the 5 MB answer on a loaded machine; the hang never answers.
    manager = createMcpManager({
      servers: { evil: { command: process.execPath, args: [hostileScript] } },
      requestTimeoutMs: 3_000,
      maxResultChars: 1000,
    });
    await manager.whenSettled();
    const tools = manager.getTools();
    const context = createTestContext({ cwd: process.cwd() });
    const flood = findTool(tools, 'mcp__evil__flood');
    expect((await flood.description()).length).toBeLessThan(2200);
    const flooded = await flood.call({}, context, testExtras);
    expect(typeof flooded.content === 'string' && flooded.content.length).toBeLessThan(1200);
    expect(flooded.content).toContain('4999000 more characters');
    const hung = await findTool(tools, 'mcp__evil__hang').call({}, context, testExtras);
    expect(hung.isError).toBe(true);
    expect(hung.content).toMatch(/timed out/i);
  });

  it('keeps names unique across servers whose names contain __', async () => {
    manager = createMcpManager({
      servers: {
        // Both give `mcp__a__evil__flood`: server `a` + tool `evil__flood`, server `a__evil` + tool `flood`.
        a: {
          command: process.execPath,
          args: [hostileScript],
          env: { EXTRA_TOOL: 'evil__flood' },
        },
        a__evil: { command: process.execPath, args: [hostileScript] },
      },
    });
    await manager.whenSettled();
    const names = manager.getTools().map((tool) => tool.name);
    expect(names).toContain('mcp__a__evil__flood');
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((name) => name.startsWith('mcp__a__evil__flood'))).toHaveLength(2);
  });
});

describe('createMcpManager with names too long for the API', () => {
  it('shortens a tool name over 128 characters, keeps valid names, and warns with the original name', async () => {
    const long = 'x'.repeat(130);
    const warnings: string[] = [];
    manager = createMcpManager({
      servers: {
        s: listedServer([
          { name: long, inputSchema: objectSchema },
          { name: `${long}b`, inputSchema: objectSchema },
          { name: 'ok', inputSchema: objectSchema },
        ]),
      },
      onWarning: (message) => warnings.push(message),
    });
    await manager.whenSettled();
    const tools = manager.getTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toHaveLength(3);
    expect(new Set(names).size).toBe(3);
    for (const name of names) expect(name).toMatch(apiToolName);
    for (const tool of tools) expect((await toolToApiSchema(tool)).name).toMatch(apiToolName);
    expect(names).toContain('mcp__s__ok');
    expect(names.filter((name) => name.startsWith('mcp__s__xxxx'))).toHaveLength(2);

    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(`MCP tool "${long}" of server "s" is exposed as ${names[0]}`);
    expect(warnings[0]).toContain('138 characters');
    expect(manager.getWarnings()).toEqual(warnings);

    const context = createTestContext({ cwd: process.cwd() });
    expect((await tools[0]!.call({}, context, testExtras)).content).toBe(`called ${long}`);
    expect((await tools[1]!.call({}, context, testExtras)).content).toBe(`called ${long}b`);
  });

  it('keeps a long server name whole while it fits, and shortens it alike for all its tools when not', async () => {
    const longish = 'b'.repeat(80);
    const huge = `huge.${'c'.repeat(140)}`;
    const warnings: string[] = [];
    manager = createMcpManager({
      servers: {
        [longish]: listedServer([
          { name: 'echo', inputSchema: objectSchema },
          { name: 'e'.repeat(60), inputSchema: objectSchema },
        ]),
        [huge]: listedServer([
          { name: 'echo', inputSchema: objectSchema },
          { name: 'list', inputSchema: objectSchema },
        ]),
      },
      onWarning: (message) => warnings.push(message),
    });
    await manager.whenSettled();
    const names = manager.getTools().map((tool) => tool.name);
    expect(names).toHaveLength(4);
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name).toMatch(apiToolName);
    expect(names).toContain(`mcp__${longish}__echo`);
    expect(names[1]?.startsWith(`mcp__${longish}__eeee`)).toBe(true);

    const [hugeEcho, hugeList] = names.slice(2);
    const prefix = hugeEcho?.slice(0, hugeEcho.length - 'echo'.length);
    expect(prefix?.startsWith('mcp__huge_ccc')).toBe(true);
    expect(hugeList).toBe(`${prefix}list`);
    expect(warnings).toContain(
      `MCP tool "echo" of server "${huge}" is exposed as ${hugeEcho}: the server's name is too long to keep whole in tool names (over 89 characters).`,
    );
  });
});

describe('createMcpManager with large messages', () => {
  it('takes a result over the SDK default of 10 MB', async () => {
    manager = createMcpManager({
      servers: {
        s: listedServer([{ name: 'big', inputSchema: objectSchema }]),
      },
      maxResultChars: 1000,
    });
    await manager.whenSettled();
    const context = createTestContext({ cwd: process.cwd() });
    const result = await findTool(manager.getTools(), 'mcp__s__big').call(
      { reply_chars: 11_000_000 },
      context,
      testExtras,
    );
    expect(result.isError).toBeUndefined();
    expect(result.content).toContain('10999000 more characters');
    expect(manager.getClients()[0]?.type).toBe('connected');
  });

  it('says that a message over maxMessageBytes closed the connection, naming server and tool', async () => {
    manager = createMcpManager({
      servers: {
        s: listedServer([
          { name: 'big', inputSchema: objectSchema },
          { name: 'small', inputSchema: objectSchema },
        ]),
      },
      maxMessageBytes: 1_000_000,
    });
    await manager.whenSettled();
    const context = createTestContext({ cwd: process.cwd() });
    const result = await findTool(manager.getTools(), 'mcp__s__big').call(
      { reply_chars: 2_000_000 },
      context,
      testExtras,
    );
    expect(result.isError).toBe(true);
    expect(result.content).toContain('MCP server "s" failed to run tool big');
    expect(result.content).toContain('larger than the limit of 1,000,000 bytes');
    const current = manager;
    expect(await waitUntil(() => current.getClients()[0]?.type === 'failed')).toBe(true);
    const error = manager.getClients()[0]?.error ?? '';
    expect(error).toContain('MCP server "s"');
    expect(error).toContain('larger than the limit of 1,000,000 bytes (option maxMessageBytes)');
    expect(error).toContain('while tool big ran');
    expect(error).not.toContain('closed its connection');
    expect(manager.getTools()).toEqual([]);
  });
});

describe('createMcpManager with large input schemas', () => {
  it('cuts long descriptions inside a schema, leaves out a tool whose schema stays too large, and warns', async () => {
    const warnings: string[] = [];
    const small = {
      type: 'object',
      properties: { a: { type: 'string', description: 'd'.repeat(3000) } },
    };
    manager = createMcpManager({
      servers: {
        s: listedServer([
          {
            name: 'flood',
            description: 'short',
            inputSchema: {
              type: 'object',
              properties: { a: { type: 'string', description: '<repeat:Z:500000>' } },
              required: ['a'],
            },
          },
          {
            name: 'enums',
            inputSchema: {
              type: 'object',
              properties: { a: { type: 'string', enum: ['<repeat:E:100000>'] } },
            },
          },
          { name: 'small', inputSchema: small },
        ]),
      },
      onWarning: (message) => warnings.push(message),
    });
    await manager.whenSettled();
    const tools = manager.getTools();
    expect(tools.map((tool) => tool.name)).toEqual(['mcp__s__flood', 'mcp__s__small']);

    const flood = await toolToApiSchema(findTool(tools, 'mcp__s__flood'));
    expect(JSON.stringify(flood.input_schema).length).toBeLessThanOrEqual(32_000);
    expect(flood.input_schema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
    // A schema within the limit is sent as the server listed it.
    expect((await toolToApiSchema(findTool(tools, 'mcp__s__small'))).input_schema).toEqual(small);

    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('MCP tool "flood" of server "s"');
    expect(warnings[0]).toContain('500,');
    expect(warnings[0]).toContain('limit of 32,000');
    expect(warnings[1]).toContain('MCP tool "enums" of server "s" was left out');
    expect(warnings[1]).toContain('100,');
  });
});
