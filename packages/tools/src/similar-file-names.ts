import { readdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';

const maxEntriesToCompare = 2000;

function editDistance(left: string, right: string, limit: number): number {
  if (Math.abs(left.length - right.length) > limit) return limit + 1;
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    let rowMinimum = row;
    for (let column = 1; column <= right.length; column++) {
      const cost = left[row - 1] === right[column - 1] ? 0 : 1;
      const value = Math.min(
        (previous[column] ?? 0) + 1,
        (current[column - 1] ?? 0) + 1,
        (previous[column - 1] ?? 0) + cost,
      );
      current.push(value);
      rowMinimum = Math.min(rowMinimum, value);
    }
    if (rowMinimum > limit) return limit + 1;
    previous = current;
  }
  return previous[right.length] ?? limit + 1;
}

/**
 * Returns up to three existing paths next to `missingPath` whose names look like it
 * (other case, other extension, or a small typo). Returns nothing when the directory
 * is missing or too large to compare cheaply.
 */
export async function findSimilarFileNames(missingPath: string): Promise<string[]> {
  const directory = dirname(missingPath);
  const wanted = basename(missingPath);
  const wantedLower = wanted.toLowerCase();
  const wantedStem = wantedLower.slice(0, wantedLower.length - extname(wantedLower).length);
  let entries: string[];
  try {
    entries = await readdir(directory);
  } catch {
    return [];
  }
  if (entries.length > maxEntriesToCompare) return [];
  const scored: Array<{ name: string; score: number }> = [];
  for (const name of entries) {
    const lower = name.toLowerCase();
    const stem = lower.slice(0, lower.length - extname(lower).length);
    let score: number | undefined;
    if (lower === wantedLower) score = 0;
    else if (stem === wantedStem && stem.length > 0) score = 1;
    else {
      const distance = editDistance(lower, wantedLower, 2);
      if (distance <= 2) score = 1 + distance;
    }
    if (score !== undefined) scored.push({ name, score });
  }
  scored.sort((left, right) => left.score - right.score || left.name.localeCompare(right.name));
  return scored.slice(0, 3).map((entry) => join(directory, entry.name));
}
