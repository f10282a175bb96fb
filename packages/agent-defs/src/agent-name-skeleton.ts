// Letters of other scripts that are commonly drawn exactly like a Latin letter or digit.
const LOOKALIKE_LETTERS: ReadonlyMap<string, string> = new Map([
  // Cyrillic
  ['а', 'a'],
  ['в', 'b'],
  ['с', 'c'],
  ['ԁ', 'd'],
  ['е', 'e'],
  ['һ', 'h'],
  ['і', 'i'],
  ['ј', 'j'],
  ['к', 'k'],
  ['м', 'm'],
  ['н', 'h'],
  ['о', 'o'],
  ['р', 'p'],
  ['ԛ', 'q'],
  ['ѕ', 's'],
  ['т', 't'],
  ['ц', 'u'],
  ['ѵ', 'v'],
  ['ԝ', 'w'],
  ['х', 'x'],
  ['у', 'y'],
  // Greek
  ['α', 'a'],
  ['β', 'b'],
  ['ε', 'e'],
  ['η', 'n'],
  ['ι', 'i'],
  ['κ', 'k'],
  ['ν', 'v'],
  ['ο', 'o'],
  ['ρ', 'p'],
  ['τ', 't'],
  ['υ', 'u'],
  ['χ', 'x'],
  ['γ', 'y'],
  ['ζ', 'z'],
  // Lookalikes within Latin and digits
  ['ı', 'i'],
  ['ɡ', 'g'],
  ['ℓ', 'l'],
  ['0', 'o'],
  ['1', 'l'],
  ['|', 'l'],
  ['_', '-'],
  ['‐', '-'],
  ['‑', '-'],
  ['‒', '-'],
  ['–', '-'],
  ['—', '-'],
  ['−', '-'],
]);

/**
 * Reduces an agent name to the form a reader sees: compatibility-normalized (NFKC, so
 * full-width and styled letters become plain ones), lowercase, accents and characters that
 * show nothing (Unicode's default-ignorable ones, such as Hangul fillers) removed, common
 * lookalike letters of other scripts mapped to Latin ones, and `0`/`1`/`_` folded into
 * `o`/`l`/`-`. Two different names with the same skeleton are easy to mistake for each other.
 */
export function agentNameSkeleton(name: string): string {
  const folded = name
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\p{M}\p{Default_Ignorable_Code_Point}]/gu, '');
  let skeleton = '';
  for (const character of folded) skeleton += LOOKALIKE_LETTERS.get(character) ?? character;
  return skeleton;
}
