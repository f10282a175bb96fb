// An MCP server whose tools come from the TOOLS environment variable (a JSON array of tool
// definitions). A string "<repeat:C:N>" anywhere in it stands for the character C repeated N
// times, so a test can list huge schemas without a huge environment. A call answers
// `called <name>`, or `reply_chars` characters of text when its arguments give that.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const tools = JSON.parse(process.env.TOOLS ?? '[]', (_key, value) => {
  const repeat = typeof value === 'string' && /^<repeat:(.):(\d+)>$/.exec(value);
  return repeat ? repeat[1].repeat(Number(repeat[2])) : value;
});

const server = new Server({ name: 'listed', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const chars = Number(request.params.arguments?.reply_chars ?? 0);
  const text = chars > 0 ? 'y'.repeat(chars) : `called ${request.params.name}`;
  return { content: [{ type: 'text', text }] };
});
await server.connect(new StdioServerTransport());
