// The main agent starts one general-purpose sub-agent, then reports what it said.
export default function policy(request) {
  if (request.agent === 'general-purpose') return 'hi from the sub-agent';
  const result = request.toolResults.find((entry) => entry.toolName === 'Agent');
  if (result) return `The sub-agent said: ${result.content.split('\n')[0]}`;
  return [
    {
      type: 'tool_use',
      name: 'Agent',
      input: { description: 'say hi', prompt: 'Say hi', subagent_type: 'general-purpose' },
    },
  ];
}
