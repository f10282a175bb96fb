// The prompt is `<Tool> <JSON input>`: the main agent makes that one call, then reports the result.
export default function policy(request) {
  const result = request.toolResults[0];
  if (result) return `${result.isError ? 'ERROR' : 'OK'}: ${result.content}`;
  const text =
    request.lastUserText
      .split('\n')
      .filter((line) => !line.startsWith('<') && line.trim() !== '')
      .at(-1) ?? '';
  const space = text.indexOf(' ');
  return [
    { type: 'tool_use', name: text.slice(0, space), input: JSON.parse(text.slice(space + 1)) },
  ];
}
