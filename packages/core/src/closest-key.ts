/** Lower case without `_`, `-` or spaces: `budget_tokens`, `Budget-Tokens` and `budgetTokens` match. */
function normalize(key: string): string {
  return key.toLowerCase().replace(/[-_\s]/g, '');
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `from` into `to`. */
export function editDistance(from: string, to: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: to.length + 1 }, (_, index) => index);
  for (let row = 1; row <= from.length; row++) {
    const current = [row];
    for (let column = 1; column <= to.length; column++) {
      const cost = from[row - 1] === to[column - 1] ? 0 : 1;
      let best = Math.min(
        previous[column]! + 1,
        current[column - 1]! + 1,
        previous[column - 1]! + cost,
      );
      if (
        row > 1 &&
        column > 1 &&
        from[row - 1] === to[column - 2] &&
        from[row - 2] === to[column - 1]
      )
        best = Math.min(best, before[column - 2]! + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[to.length]!;
}

/** How {@link closestKey} matches. */
export type ClosestKeyOptions = {
  /**
   * `strict` (for files written by hand, where an unknown key may be meant as it is): one
   * edit for keys of up to five letters, else two, and no answer when two keys are as close.
   * `loose` (for options of an API): one edit up to four letters, two up to eight, else three,
   * the nearest key winning, and the start of exactly one key (`budget` for `budgetTokens`).
   * Default `loose`.
   */
  mode?: 'strict' | 'loose';
};

function allowedEdits(length: number, mode: 'strict' | 'loose'): number {
  if (mode === 'strict') return length <= 5 ? 1 : 2;
  return length <= 4 ? 1 : length <= 8 ? 2 : 3;
}

/**
 * The known key `key` was most likely meant as, or undefined when none is close enough: the
 * same key in another case or with `_`/`-` (`max_turns` for `maxTurns`), or a typo of a few
 * letters (`desciption`); see {@link ClosestKeyOptions} for how close.
 */
export function closestKey(
  key: string,
  known: readonly string[],
  options: ClosestKeyOptions = {},
): string | undefined {
  const mode = options.mode ?? 'loose';
  const given = normalize(key);
  if (given === '') return undefined;
  const same = known.filter((name) => normalize(name) === given);
  if (same.length > 0) return mode === 'strict' && same.length > 1 ? undefined : same[0];
  const allowed = allowedEdits(given.length, mode);
  let best: string | undefined;
  let bestDistance = allowed + 1;
  let tie = false;
  for (const name of known) {
    const distance = editDistance(given, normalize(name));
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
      tie = false;
    } else if (distance === bestDistance) tie = true;
  }
  if (best !== undefined && !(mode === 'strict' && tie)) return best;
  if (mode === 'strict' || given.length < 4) return undefined;
  const starts = known.filter((name) => {
    const other = normalize(name);
    return other.startsWith(given) || (other.length >= 4 && given.startsWith(other));
  });
  return starts.length === 1 ? starts[0] : undefined;
}
