// The main agent hands the prompt to a general-purpose sub-agent, which repeats its last line
// (after the reminders the runtime adds); the main agent then repeats what the sub-agent
// said: the prompt's text reaches every output.
export default function policy(request) {
  if (request.agent === 'general-purpose')
    return `you asked: ${request.lastUserText.trim().split('\n').at(-1)}`;
  const result = request.toolResults.find((entry) => entry.toolName === 'Agent');
  if (result) return `The sub-agent said: ${result.content.split('\n')[0]}`;
  return [
    {
      type: 'tool_use',
      name: 'Agent',
      input: {
        description: 'repeat the prompt',
        prompt: request.lastUserText,
        subagent_type: 'general-purpose',
      },
    },
  ];
}
