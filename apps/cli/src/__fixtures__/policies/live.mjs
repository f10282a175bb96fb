// For the live-view test: the main agent starts a quick fork and a long foreground
// general-purpose agent whose Bash call sleeps for the number of seconds in the prompt.
export default function policy(request) {
  if (request.agent === 'fork') return 'quick part done';
  if (request.agent === 'general-purpose') {
    if (request.toolResults.length > 0) return 'long task done';
    const seconds =
      /sleep-for (\d+\.\d+)/.exec(
        request.messages.map((message) => JSON.stringify(message.content)).join(' '),
      )?.[1] ?? '30.0';
    return [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${seconds}` } }];
  }
  if (request.toolResults.length > 0)
    return 'The long task went to the background; waiting for it.';
  const seconds = /sleep-for (\d+\.\d+)/.exec(request.lastUserText)?.[1] ?? '30.0';
  return [
    {
      type: 'tool_use',
      name: 'Agent',
      input: { description: 'quick part', prompt: 'Do the quick part' },
    },
    {
      type: 'tool_use',
      name: 'Agent',
      input: {
        description: 'long task',
        prompt: `Run the long task: sleep-for ${seconds}`,
        subagent_type: 'general-purpose',
      },
    },
  ];
}
