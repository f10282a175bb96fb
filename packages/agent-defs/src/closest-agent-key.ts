/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`, up to `limit` + 1. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, before[j - 2]! + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** `maxTurns`, `max_turns`, `Max-Turns` alike: lower case without `-` and `_`. */
function folded(key: string): string {
  return key.toLowerCase().replace(/[-_]/g, '');
}

/**
 * The known key `key` was most likely meant as, when it is one misspelt: the same but for case,
 * `-` or `_` (`max_turns`), or one or two edits away (`tool`, `desciption`; one for keys of up
 * to five letters). Undefined when none is that close, or when two are equally close.
 */
export function closestAgentKey(key: string, known: readonly string[]): string | undefined {
  const wanted = folded(key);
  if (wanted.length === 0) return undefined;
  const same = known.filter((candidate) => folded(candidate) === wanted);
  if (same.length > 0) return same.length === 1 ? same[0] : undefined;
  const limit = wanted.length <= 5 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = limit + 1;
  let tie = false;
  for (const candidate of known) {
    const distance = editDistance(wanted, folded(candidate), limit);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tie = false;
    } else if (distance === bestDistance) {
      tie = true;
    }
  }
  return bestDistance <= limit && !tie ? best : undefined;
}
