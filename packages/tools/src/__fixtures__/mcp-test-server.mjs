// A tiny stdio MCP server for the bridge tests: `echo`, `add`, `fail` and `greet.user`.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'delegate-test-server', version: '1.0.0' });

server.registerTool(
  'echo',
  {
    description: 'Returns the text it is given.',
    inputSchema: { text: z.string().describe('Text to echo') },
    annotations: { readOnlyHint: true },
  },
  async ({ text }) => ({ content: [{ type: 'text', text }] }),
);

server.registerTool(
  'add',
  {
    description: 'Adds two numbers.',
    inputSchema: { a: z.number(), b: z.number() },
  },
  async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
);

server.registerTool(
  'fail',
  { description: 'Always fails.', inputSchema: {} },
  async () => {
    throw new Error('this tool always fails');
  },
);

server.registerTool(
  'greet.user',
  { description: 'Greets someone.', inputSchema: { name: z.string() } },
  async ({ name }) => ({
    content: [
      { type: 'text', text: `Hello, ${name}!` },
      { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
    ],
  }),
);

process.stderr.write('test server ready\n');
await server.connect(new StdioServerTransport());

// Lets a test watch a connected server go away.
if (process.env.EXIT_AFTER_MS) {
  setTimeout(() => {
    process.stderr.write('shutting down on request\n');
    process.exit(1);
  }, Number(process.env.EXIT_AFTER_MS));
}
