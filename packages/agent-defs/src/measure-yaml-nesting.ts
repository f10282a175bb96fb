/** How deeply a YAML text nests and how many aliases it holds, found without parsing it. */
export type YamlNesting = {
  /** The deepest nesting found (block indentation levels, list markers and open brackets). */
  depth: number;
  /** 1-based line on which `depth` was first reached. */
  line: number;
  /** Aliases (`*name` where a value starts), outside quotes, comments and block scalars. */
  aliases: number;
};

// Whether `line` opens a block scalar (`|`, `>-`, `|2+`, …) at its end.
function opensBlockScalar(line: string): boolean {
  return /(?:^|[\s:-])[|>][-+0-9]*\s*(?:#.*)?$/.test(line);
}

function indentOf(line: string): number {
  let index = 0;
  while (line.charAt(index) === ' ' || line.charAt(index) === '\t') index += 1;
  return index;
}

// Skips a quoted scalar that opens at `start` and returns the index after it (or the line's end).
function skipQuoted(line: string, start: number): number {
  const quote = line.charAt(start);
  for (let index = start + 1; index < line.length; index++) {
    const character = line.charAt(index);
    if (quote === '"' && character === '\\') index += 1;
    else if (character === quote) return index + 1;
  }
  return line.length;
}

type FlowState = {
  depth: number;
  inQuote: string | undefined;
  aliases: number;
  /** Where the last line's comment began (its length when it has none). */
  codeEnd: number;
};

// Follows brackets across a line, outside quotes and comments; quotes count only where a
// scalar can start, so an apostrophe inside plain text (`it 's`) is not read as a quote.
function scanFlow(line: string, state: FlowState): number {
  let deepest = state.depth;
  let index = 0;
  state.codeEnd = line.length;
  if (state.inQuote !== undefined) {
    const close = skipQuoted(`${state.inQuote}${line}`, 0) - 1;
    if (close >= line.length) return deepest;
    state.inQuote = undefined;
    index = close;
  }
  let significant = '';
  for (; index < line.length; index++) {
    const character = line.charAt(index);
    const previous = index === 0 ? ' ' : line.charAt(index - 1);
    if (character === '#' && /\s/.test(previous)) {
      state.codeEnd = index;
      break;
    }
    // A value starts at the line's first character or after `:`, `-`, `?`, `[`, `{` or `,`.
    const valueStarts = significant === '' || ':-?[{,'.includes(significant);
    if (character === '*' && valueStarts) state.aliases += 1;
    if (!/\s/.test(character)) significant = character;
    if ((character === '"' || character === "'") && valueStarts && /[\s[{,:]/.test(previous)) {
      const end = skipQuoted(line, index);
      if (end >= line.length && line.charAt(line.length - 1) !== character) {
        state.inQuote = character;
        return deepest;
      }
      index = end - 1;
    } else if (character === '[' || character === '{') {
      state.depth += 1;
      deepest = Math.max(deepest, state.depth);
    } else if ((character === ']' || character === '}') && state.depth > 0) {
      state.depth -= 1;
    }
  }
  return deepest;
}

// Leading `- ` and `? ` markers each open one more level (`- - - x` is three lists deep).
function countCompactMarkers(line: string, from: number): number {
  let count = 0;
  let index = from;
  while (/^[-?](?: +|$)/.test(line.slice(index))) {
    count += 1;
    index += 1;
    while (line.charAt(index) === ' ') index += 1;
  }
  return count;
}

/**
 * Measures how deeply a YAML text nests and counts its aliases, in one linear pass and
 * without parsing it, so a text too deep for a parser to read quickly (`[[[[…]]]]`,
 * `{a: {b: …}}`, hundreds of indentation levels) or holding too many aliases can be refused
 * before any parser sees it. Quoted values, comments and block scalar content are skipped.
 */
export function measureYamlNesting(text: string): YamlNesting {
  const lines = text.split('\n');
  const indents: number[] = [];
  const flow: FlowState = { depth: 0, inQuote: undefined, aliases: 0, codeEnd: 0 };
  let blockScalarIndent: number | undefined;
  let deepest = { depth: 0, line: 1 };
  lines.forEach((line, index) => {
    const indent = indentOf(line);
    const blank = indent === line.length;
    if (blockScalarIndent !== undefined) {
      if (blank || indent > blockScalarIndent) return;
      blockScalarIndent = undefined;
    }
    if (blank) return;
    if (flow.depth === 0 && flow.inQuote === undefined) {
      while (indents.length > 0 && (indents[indents.length - 1] ?? 0) >= indent) indents.pop();
      indents.push(indent);
    }
    const markers = countCompactMarkers(line, indent);
    const flowDepth = scanFlow(line, flow);
    const depth = indents.length + markers + flowDepth;
    if (depth > deepest.depth) deepest = { depth, line: index + 1 };
    // A `|` or `>` inside the line's comment opens nothing.
    const code = line.slice(0, flow.codeEnd);
    if (flow.depth === 0 && flow.inQuote === undefined && opensBlockScalar(code)) {
      blockScalarIndent = indent;
    }
  });
  return { ...deepest, aliases: flow.aliases };
}
