// A stdio MCP server (raw JSON-RPC, one tool `echo`) that keeps running when its stdin closes,
// as servers with threads of their own often do. It writes its pid to `PID_FILE` and notes
// `stdin end` in `LOG_FILE` when its input ends; a signal still ends it.
import { appendFileSync, writeFileSync } from 'node:fs';

if (process.env.PID_FILE) writeFileSync(process.env.PID_FILE, String(process.pid));
setInterval(() => undefined, 1_000);

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const tool = {
  name: 'echo',
  description: 'Returns the text it is given.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
};

function handle(message) {
  if (message.id === undefined) return;
  if (message.method === 'initialize') {
    send({
      jsonrpc: '2.0',
      id: message.id,
      result: {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'stubborn', version: '1.0.0' },
      },
    });
  } else if (message.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: message.id, result: { tools: [tool] } });
  } else if (message.method === 'tools/call') {
    const text = String(message.params.arguments?.text ?? '');
    send({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text }] } });
  } else {
    send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'no such method' } });
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
    const line = buffered.slice(0, end);
    buffered = buffered.slice(end + 1);
    if (line.trim() !== '') handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => {
  if (process.env.LOG_FILE) appendFileSync(process.env.LOG_FILE, 'stdin end\n');
});
