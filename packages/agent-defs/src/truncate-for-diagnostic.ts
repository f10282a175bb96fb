/** Most characters of a file's own text that a diagnostic quotes. */
export const MAX_QUOTED_CHARACTERS = 40;

/** Cuts text quoted in a diagnostic to {@link MAX_QUOTED_CHARACTERS}, so diagnostics never echo a file. */
export function truncateForDiagnostic(text: string): string {
  // Whole code points, so a cut never leaves half of a surrogate pair.
  const characters = Array.from(text);
  return characters.length > MAX_QUOTED_CHARACTERS
    ? `${characters.slice(0, MAX_QUOTED_CHARACTERS).join('')}…`
    : text;
}
