// The main agent starts an `echoer` sub-agent, which calls its own MCP server's echo tool and
// reports what came back; the main agent repeats the report.
export default function policy(request) {
  if (request.agent === 'echoer') {
    const echoed = request.toolResults.find((entry) => entry.toolName === 'mcp__echo__echo');
    if (echoed) return `echoed: ${echoed.content}`;
    return [{ type: 'tool_use', name: 'mcp__echo__echo', input: { text: 'from its own server' } }];
  }
  const result = request.toolResults.find((entry) => entry.toolName === 'Agent');
  if (result) return `The sub-agent said: ${result.content.split('\n')[0]}`;
  return [
    {
      type: 'tool_use',
      name: 'Agent',
      input: { description: 'echo', prompt: 'Echo something', subagent_type: 'echoer' },
    },
  ];
}
