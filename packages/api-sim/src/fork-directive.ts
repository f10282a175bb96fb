const TAG = /<fork-directive>([\s\S]*?)<\/fork-directive>/i;
const LINE = /^[ \t]*(?:your[ \t]+)?directive:[ \t]*/im;

/** Finds the fork directive in a text block; returns undefined when there is none. */
export type ForkDirectiveMatcher = (lastTextBlock: string) => string | undefined;

/**
 * The default fork directive matcher: the content of a `<fork-directive>…</fork-directive>` tag,
 * or everything after a line starting with `Directive:` or `Your directive:` (case-insensitive).
 */
export const defaultForkDirective: ForkDirectiveMatcher = (lastTextBlock) => {
  const tagged = TAG.exec(lastTextBlock);
  if (tagged?.[1] !== undefined) return tagged[1].trim();
  const line = LINE.exec(lastTextBlock);
  if (!line) return undefined;
  return lastTextBlock.slice(line.index + line[0].length).trim();
};
