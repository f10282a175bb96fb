/**
 * Splits a comma-separated list such as `Read, Grep, Bash(git add, git commit)` into trimmed,
 * non-empty items. Commas inside parentheses belong to the item, so tool rules with
 * arguments (`Bash(...)`, `Agent(a, b)`) stay whole.
 */
export function splitListValue(value: string): string[] {
  const items: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of value) {
    if (character === '(') depth += 1;
    else if (character === ')') depth = Math.max(0, depth - 1);
    if (character === ',' && depth === 0) {
      items.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  items.push(current);
  return items.map((item) => item.trim()).filter((item) => item.length > 0);
}
