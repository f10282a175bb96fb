// Answers with every user text it has seen, so a resumed run shows the earlier turns.
export default function policy(request) {
  const texts = request.messages
    .filter((message) => message.role === 'user')
    .flatMap((message) => message.content)
    .filter((block) => block.type === 'text' && !block.text.includes('<system-reminder>'))
    .map((block) => block.text);
  return `seen: ${texts.join(' | ')}`;
}
