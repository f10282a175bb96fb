import { truncateForDiagnostic } from './truncate-for-diagnostic.js';

// Characters that would garble a terminal or print as nothing (controls, zero-width and
// direction characters, line and paragraph separators).
// eslint-disable-next-line no-control-regex -- the point is to find control characters
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * Quotes text from a file or a file name for a diagnostic: cut to the quoting limit, in
 * double quotes, with each control or invisible character written as `\u{…}`, so a name made
 * to mislead shows what it holds.
 */
export function quoteForDiagnostic(text: string): string {
  const escaped = truncateForDiagnostic(text).replace(
    UNPRINTABLE,
    (character) => `\\u{${(character.codePointAt(0) ?? 0).toString(16).toUpperCase()}}`,
  );
  return `"${escaped.replace(/"/g, '\\"')}"`;
}
