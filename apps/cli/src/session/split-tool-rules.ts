/** Splits `--allowed-tools "Bash(git add, git commit) Edit,Read"` into rules (commas and spaces outside parentheses separate). */
export function splitToolRules(values: readonly string[]): string[] {
  const rules: string[] = [];
  for (const value of values) {
    let depth = 0;
    let current = '';
    for (const character of value) {
      if (character === '(') depth++;
      else if (character === ')') depth = Math.max(0, depth - 1);
      if (depth === 0 && (character === ',' || /\s/.test(character))) {
        if (current.trim()) rules.push(current.trim());
        current = '';
      } else current += character;
    }
    if (current.trim()) rules.push(current.trim());
  }
  return rules;
}
