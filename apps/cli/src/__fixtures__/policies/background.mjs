// For the interactive-session test of background work: "bg <seconds>" starts a background
// general-purpose agent, "fg <seconds>" a foreground one; each sub-agent runs
// `sleep <seconds>` through Bash. A <task-notification> gets an answer naming its status.
function seconds(request) {
  const text = request.messages.map((message) => JSON.stringify(message.content)).join(' ');
  return /sleep-for (\d+(?:\.\d+)?)/.exec(text)?.[1] ?? '5';
}

export default function policy(request) {
  if (request.agent === 'general-purpose') {
    if (request.toolResults.length > 0) return 'slept';
    return [{ type: 'tool_use', name: 'Bash', input: { command: `sleep ${seconds(request)}` } }];
  }
  const last = request.lastUserText;
  const status = /<task-notification>[\s\S]*?status: (\w+)/.exec(last)?.[1];
  if (status) return `notified: ${status}`;
  if (request.toolResults.length > 0) return 'main agent: the Agent call returned';
  const job = /(?:^|\n)(bg|fg) (\d+(?:\.\d+)?)\s*$/.exec(last);
  if (!job) return `echo: ${last}`;
  return [
    {
      type: 'tool_use',
      name: 'Agent',
      input: {
        description: `${job[1]} job`,
        prompt: `sleep-for ${job[2]}`,
        subagent_type: 'general-purpose',
        ...(job[1] === 'bg' ? { run_in_background: true } : {}),
      },
    },
  ];
}
