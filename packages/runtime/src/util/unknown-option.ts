/** Lower case without `_`, `-` or spaces: `budget_tokens`, `BudgetTokens` and `budgetTokens` match. */
function normalize(key: string): string {
  return key.toLowerCase().replace(/[-_\s]/g, '');
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `from` into `to`. */
function editDistance(from: string, to: string): number {
  const rows = Array.from({ length: from.length + 1 }, (_, index) => [index]);
  for (let column = 1; column <= to.length; column += 1) rows[0]![column] = column;
  for (let row = 1; row <= from.length; row += 1) {
    for (let column = 1; column <= to.length; column += 1) {
      const cost = from[row - 1] === to[column - 1] ? 0 : 1;
      let best = Math.min(
        rows[row - 1]![column]! + 1,
        rows[row]![column - 1]! + 1,
        rows[row - 1]![column - 1]! + cost,
      );
      if (
        row > 1 &&
        column > 1 &&
        from[row - 1] === to[column - 2] &&
        from[row - 2] === to[column - 1]
      )
        best = Math.min(best, rows[row - 2]![column - 2]! + 1);
      rows[row]![column] = best;
    }
  }
  return rows[from.length]![to.length]!;
}

/**
 * The known key `key` was most likely meant as, or undefined when none is close: the same
 * key in another case or with `_`/`-` (`budget_tokens` for `budgetTokens`), a typo of a few
 * letters (`maxTurn`), or the start of exactly one known key (`budget`).
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const given = normalize(key);
  if (given === '') return undefined;
  const same = known.find((name) => normalize(name) === given);
  if (same !== undefined) return same;
  const allowed = given.length <= 4 ? 1 : given.length <= 8 ? 2 : 3;
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(given, normalize(name));
    if (distance <= allowed && (best === undefined || distance < best.distance))
      best = { name, distance };
  }
  if (best) return best.name;
  const starts =
    given.length < 4
      ? []
      : known.filter((name) => {
          const other = normalize(name);
          return other.startsWith(given) || (other.length >= 4 && given.startsWith(other));
        });
  return starts.length === 1 ? starts[0] : undefined;
}

/**
 * What is wrong with an unknown key, to follow its path in a message: `is not an option (did
 * you mean budgetTokens?)` when a known key is close, else the known keys (or, for a long
 * list, `listedIn`, the type that documents them).
 */
export function unknownOptionProblem(options: {
  /** The key given. */
  key: string;
  /** The keys the object takes. */
  known: readonly string[];
  /** The type that lists them, named instead of a long list (`DelegateSessionOptions`). */
  listedIn?: string;
}): string {
  const { key, known, listedIn } = options;
  const meant = closestKey(key, known);
  if (meant !== undefined) return `is not an option (did you mean ${meant}?)`;
  if (listedIn !== undefined) return `is not an option (check the spelling against ${listedIn})`;
  return `is not an option (the options here are ${known.join(', ')})`;
}
