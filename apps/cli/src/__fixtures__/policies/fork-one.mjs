// The main agent calls Agent without subagent_type (a fork when forking is on).
export default function policy(request) {
  if (request.agent !== undefined) return `worker ${request.agent} done`;
  const result = request.toolResults.find((entry) => entry.toolName === 'Agent');
  if (result) return `Worker: ${result.content.split('\n')[0]}`;
  return [
    { type: 'tool_use', name: 'Agent', input: { description: 'one part', prompt: 'Do one part' } },
  ];
}
