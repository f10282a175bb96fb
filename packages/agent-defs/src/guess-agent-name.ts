const NAME_LINE =
  /^name[ \t]*:[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#"'][^\n#]*?))[ \t]*(?:#[^\n]*)?\r?$/m;

/**
 * The agent name a frontmatter means to give, read from its `name:` line without parsing the
 * YAML, so a file that fails to load can still be matched to the agent type it would have
 * defined. Returns `undefined` when there is no such line.
 */
export function guessAgentName(yaml: string): string | undefined {
  const match = NAME_LINE.exec(yaml);
  if (match === null) return undefined;
  const name = (match[1] ?? match[2] ?? match[3] ?? '').trim();
  return name.length === 0 ? undefined : name;
}
