const NAME_LINE =
  /^([ \t]*)name[ \t]*:[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#"'][^\n#]*?))[ \t]*(?:#[^\n]*)?\r?$/gm;

/**
 * The agent name a frontmatter means to give, read from its `name:` line without parsing the
 * YAML, so a file that fails to load can still be matched to the agent type it would have
 * defined. The least indented such line counts (a frontmatter indented as a whole still names
 * its agent; a `name:` nested deeper, in a hook or a server, does not), the first of those when
 * there are several. Returns `undefined` when there is no such line.
 */
export function guessAgentName(yaml: string): string | undefined {
  let best: { indent: number; name: string } | undefined;
  for (const match of yaml.matchAll(NAME_LINE)) {
    const indent = match[1]!.length;
    if (best !== undefined && indent >= best.indent) continue;
    best = { indent, name: (match[2] ?? match[3] ?? match[4] ?? '').trim() };
  }
  return best === undefined || best.name.length === 0 ? undefined : best.name;
}
