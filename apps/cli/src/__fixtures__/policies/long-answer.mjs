// For the terminal-size tests: `lines <n>` is answered with n numbered lines (`line 0 of n` …),
// anything else with `echo: <prompt>`.
export default function policy(request) {
  const prompt = request.lastUserText.trim().split('\n').at(-1) ?? '';
  const count = /^lines (\d+)$/.exec(prompt)?.[1];
  if (count === undefined) return `echo: ${prompt}`;
  return Array.from({ length: Number(count) }, (_, index) => `line ${index} of ${count}`).join('\n');
}
