// Never finishes on its own: every turn calls Glob again.
export default function policy() {
  return [{ type: 'tool_use', name: 'Glob', input: { pattern: '*' } }];
}
