// An MCP server that misbehaves on purpose: colliding tool names, a huge description,
// paginated listing, a duplicate name, a tool that floods its result and one that hangs.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const schema = { type: 'object', properties: {} };
const pages = [
  [
    { name: 'a.b', description: 'dotted', inputSchema: schema },
    { name: 'a_b', description: 'underscored', inputSchema: schema },
    { name: 'a b', description: 'spaced', inputSchema: schema },
  ],
  [
    { name: 'flood', description: 'x'.repeat(50_000), inputSchema: schema },
    { name: 'hang', description: 'Never answers.', inputSchema: schema },
    { name: 'a_b', description: 'listed twice', inputSchema: schema },
    ...(process.env.EXTRA_TOOL ? [{ name: process.env.EXTRA_TOOL, inputSchema: schema }] : []),
  ],
];

const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  const page = Number(request.params?.cursor ?? 0);
  return {
    tools: pages[page],
    ...(page + 1 < pages.length ? { nextCursor: String(page + 1) } : {}),
  };
});
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  switch (request.params.name) {
    case 'flood':
      return { content: [{ type: 'text', text: 'y'.repeat(5_000_000) }] };
    case 'hang':
      return new Promise(() => {});
    default:
      return { content: [{ type: 'text', text: `called ${request.params.name}` }] };
  }
});
await server.connect(new StdioServerTransport());
