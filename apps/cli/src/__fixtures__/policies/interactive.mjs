// For the interactive-session test: `run <command>` makes the main agent call Bash with it;
// anything else is answered with every prompt seen so far (so a kept conversation shows).
function prompts(request) {
  return request.messages
    .filter((message) => message.role === 'user')
    .flatMap((message) => message.content)
    .filter((block) => block.type === 'text' && !block.text.includes('<system-reminder>'))
    .map((block) => block.text);
}

export default function policy(request) {
  // A prompt typed after a stopped turn shares its user message with the stopped call's result.
  const typed =
    request.lastTextBlock !== undefined && !request.lastTextBlock.includes('<system-reminder>');
  const result = request.toolResults[0];
  if (result && !typed)
    return `${result.isError ? 'ERROR' : 'OK'}: ${result.content.slice(0, 200)}`;
  const last = prompts(request).at(-1) ?? '';
  if (last.startsWith('run '))
    return [{ type: 'tool_use', name: 'Bash', input: { command: last.slice(4) } }];
  return `seen: ${prompts(request).join(' | ')}`;
}
