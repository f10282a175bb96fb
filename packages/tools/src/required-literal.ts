const classEscapes = new Set('dDwWsSbBnrtfv0123456789cxukpP'.split(''));

function findGroupEnd(source: string, start: number): number {
  let depth = 0;
  for (let index = start; index < source.length; index++) {
    const character = source[index];
    if (character === '\\') index++;
    else if (character === '[') {
      index++;
      while (index < source.length && source[index] !== ']') {
        if (source[index] === '\\') index++;
        index++;
      }
    } else if (character === '(') depth++;
    else if (character === ')') {
      depth--;
      if (depth === 0) return index;
    }
  }
  return source.length;
}

/**
 * Returns a literal substring that every match of the JS regular expression `source`
 * must contain (the longest one found, at least two characters), or undefined when none
 * can be proven. Used to skip files cheaply before running the regex. Groups,
 * alternations, classes and optional parts are treated conservatively.
 */
export function findRequiredLiteral(source: string): string | undefined {
  const runs: string[] = [];
  let current = '';
  const endRun = (): void => {
    if (current !== '') runs.push(current);
    current = '';
  };
  for (let index = 0; index < source.length; index++) {
    const character = source[index] ?? '';
    if (character === '|') return undefined;
    if (character === '\\') {
      const next = source[index + 1];
      index++;
      if (next === undefined || classEscapes.has(next)) endRun();
      else current += next;
      continue;
    }
    if (character === '[') {
      endRun();
      index++;
      while (index < source.length && source[index] !== ']') {
        if (source[index] === '\\') index++;
        index++;
      }
      continue;
    }
    if (character === '(') {
      // A group may hold an alternation; a top-level `|` inside it is not global, but
      // its contents are not required either, so the whole group is skipped.
      endRun();
      index = findGroupEnd(source, index);
      const after = source[index + 1];
      if (after === '?' || after === '*' || after === '+') index++;
      continue;
    }
    if (character === '?' || character === '*') {
      current = current.slice(0, -1);
      endRun();
      if (source[index + 1] === '?') index++;
      continue;
    }
    if (character === '+') {
      endRun();
      if (source[index + 1] === '?') index++;
      continue;
    }
    if (character === '{') {
      const quantifier = /^\{(\d+)(,\d*)?\}/.exec(source.slice(index));
      if (quantifier) {
        if (quantifier[1] === '0') current = current.slice(0, -1);
        endRun();
        index += quantifier[0].length - 1;
        continue;
      }
      current += character;
      continue;
    }
    if (character === '.' || character === '^' || character === '$') {
      endRun();
      continue;
    }
    current += character;
  }
  endRun();
  let best: string | undefined;
  for (const run of runs)
    if (run.length >= 2 && (best === undefined || run.length > best.length)) best = run;
  return best;
}
