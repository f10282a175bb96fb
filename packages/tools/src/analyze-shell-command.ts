import { basename } from 'node:path';
import { loadShellParser, type ShellSyntaxNode, withShellSyntaxTree } from './shell-parser.js';
import { literalInputOf, type ShellWord, shellWordOf } from './shell-word.js';
import { withShellExpansions } from './shell-word-expansions.js';
import {
  commandEvaluationReasons,
  declarationReasons,
  evaluatedValueReasons,
  testCommandReasons,
  unsetReasons,
} from './shell-value-evaluation.js';
import { wrappedRuns } from './shell-wrappers.js';

export type { ShellWord } from './shell-word.js';

/** One command a shell line would run. */
export type ShellCommand = {
  /** The program after quote removal, as written (`rm`, `/bin/rm`, `./build.sh`). */
  program: string;
  /** Its arguments. */
  args: ShellWord[];
  /** Variable assignments written before the program (`FOO=1 rm x` has `FOO=1`). */
  assignments: string[];
  /**
   * Where it was found: `line` — a command of the line itself, anywhere in it (every part
   * of a pipeline or chain, subshells, groups, function bodies, `$(…)`, backticks, process
   * substitution, here-documents); `wrapped` — the command a wrapper runs (`sudo rm x`,
   * `env A=1 rm x`, `xargs rm`, `timeout 5 rm x`, `find -exec rm`); `code` — a command of
   * shell code held in a string (`bash -c '…'`, `eval`, `trap`, `watch`, `su -c`, `alias`).
   */
  origin: 'line' | 'wrapped' | 'code';
  /** The command's source text (for `wrapped` ones, its words joined by spaces). */
  text: string;
};

/** What `analyzeShellCommand` found in a line. */
export type ShellAnalysis = {
  /** Every command that would run, in source order, wrappers and wrapped commands both. */
  commands: ShellCommand[];
  /**
   * True when part of the line cannot be seen through: it does not parse, a program name
   * is only known at run time (`$CMD x`, `$(echo rm) x`), `eval` or `bash -c` of a
   * variable, a shell reading code from a pipe, a wrapper option this analysis does not
   * know, nesting past the depth limit, or bash taking code from a value (arithmetic on
   * variables such as `$((a))` or `${arr[i]}`, indirection `${!x}`, prompt expansion
   * `${x@P}`, names from values such as `printf -v "$name"`, `PS4=…`).
   */
  opaque: boolean;
  /** Why it is opaque, one entry per problem. */
  opaqueReasons: string[];
  /** Files written by redirections (`> out`, `>> log`, `&> all`), except `/dev/null` and descriptor copies. */
  writtenFiles: ShellWord[];
  /** Files read by redirections (`< input`). */
  readFiles: ShellWord[];
};

/** Longest line analysed (characters); a longer one is opaque. */
export const MAX_ANALYZED_COMMAND_LENGTH = 1_000_000;

/** How deeply shell code inside strings (`bash -c "bash -c '…'"`) and wrappers are followed. */
const maxDepth = 16;

const harmlessTargets = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/tty']);

type Walk = { analysis: ShellAnalysis; origin: 'line' | 'code'; depth: number; source: string };

function markOpaque(analysis: ShellAnalysis, reason: string): void {
  analysis.opaque = true;
  if (!analysis.opaqueReasons.includes(reason)) analysis.opaqueReasons.push(reason);
}

function quote(text: string): string {
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return JSON.stringify(shown);
}

/**
 * A backslash-newline inside a word (`r\⏎m`) joins the word in bash, but the grammar
 * splits it there; such a line is treated as one the parser cannot see through.
 */
function hasContinuationInsideWord(source: string): boolean {
  for (
    let index = source.indexOf('\\\n');
    index !== -1;
    index = source.indexOf('\\\n', index + 2)
  ) {
    let start = index;
    while (start > 0 && source[start - 1] === '\\') start--;
    const escapedBackslashes = (index - start) % 2 === 1;
    if (escapedBackslashes) continue;
    const before = source[start - 1];
    const after = source[index + 2];
    if (before !== undefined && after !== undefined && /\S/.test(before) && /\S/.test(after)) {
      return true;
    }
  }
  return false;
}

/**
 * The grammar skips an escaped blank (`\ `) as if it were a space. Where it starts a word
 * (`printf \ a`, a line starting with `\ x`) bash keeps it as part of the word, and the
 * grammar may then join or split commands differently from bash.
 */
function hasEscapedBlankStartingWord(source: string): boolean {
  const pattern = /\\[ \t]/g;
  for (let match = pattern.exec(source); match !== null; match = pattern.exec(source)) {
    let start = match.index;
    while (start > 0 && source[start - 1] === '\\') start--;
    if ((match.index - start) % 2 === 1) continue;
    const before = source[start - 1];
    if (before === undefined || /[\s;&|()<>]/.test(before)) return true;
  }
  return false;
}

type StandardInput =
  { kind: 'pipe' } | { kind: 'text'; text: string | undefined } | { kind: 'other' };

/** Where a command's standard input comes from, as far as shell code read from it matters. */
function standardInputOf(command: ShellSyntaxNode): StandardInput {
  for (const child of command.namedChildren) {
    if (child?.type === 'herestring_redirect') {
      const value = child.namedChildren.at(-1);
      return { kind: 'text', text: value ? literalInputOf(value) : undefined };
    }
  }
  let statement = command;
  const parent = command.parent;
  if (parent?.type === 'redirected_statement') {
    for (const redirect of parent.namedChildren) {
      if (redirect?.type === 'heredoc_redirect') {
        const body = redirect.namedChildren.find((child) => child?.type === 'heredoc_body');
        return { kind: 'text', text: body ? literalInputOf(body) : '' };
      }
      if (
        redirect?.type === 'file_redirect' &&
        redirect.children.find((child) => child !== null && !child.isNamed)?.type === '<'
      )
        return { kind: 'other' };
    }
    statement = parent;
  }
  const pipeline = statement.parent;
  if (pipeline?.type === 'pipeline' && pipeline.namedChildren[0]?.id !== statement.id) {
    return { kind: 'pipe' };
  }
  return { kind: 'other' };
}

function analyzeCode(options: { source: string; walk: Walk }): void {
  const { source, walk } = options;
  const { analysis } = walk;
  if (source.length > MAX_ANALYZED_COMMAND_LENGTH) {
    markOpaque(analysis, `the line is longer than ${MAX_ANALYZED_COMMAND_LENGTH} characters`);
    return;
  }
  if (walk.depth > maxDepth) {
    markOpaque(analysis, `shell code is nested more than ${maxDepth} levels deep`);
    return;
  }
  withShellSyntaxTree(source, (root) => {
    const quoted: Array<[number, number]> = [];
    const literal: Array<[number, number]> = [];
    const stack: ShellSyntaxNode[] = [root];
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      if (quotedTypes.has(node.type)) quoted.push([node.startIndex, node.endIndex]);
      if (isLiteralText(node)) literal.push([node.startIndex, node.endIndex]);
      visitNode(node, walk);
      for (let index = node.namedChildCount - 1; index >= 0; index--) {
        const child = node.namedChild(index);
        if (child !== null) stack.push(child);
      }
    }
    // Inside quotes and here-document bodies these spellings cannot split or join words.
    const outsideQuotes = blankOut(source, quoted);
    if (hasContinuationInsideWord(outsideQuotes)) {
      markOpaque(analysis, 'a backslash-newline continues a word across lines');
    }
    if (hasEscapedBlankStartingWord(outsideQuotes)) {
      markOpaque(analysis, 'a word starts with an escaped blank (\\ )');
    }
    for (const reason of evaluatedValueReasons(blankOut(source, literal))) {
      markOpaque(analysis, reason);
    }
  });
}

const quotedTypes = new Set(['raw_string', 'string', 'ansi_c_string', 'heredoc_body', 'comment']);

/**
 * True for text bash never expands: single-quoted and `$'…'` strings, comments, and the body of
 * a here-document whose delimiter is quoted (`<<'EOF'`).
 */
function isLiteralText(node: ShellSyntaxNode): boolean {
  if (node.type === 'raw_string' || node.type === 'ansi_c_string' || node.type === 'comment')
    return true;
  if (node.type !== 'heredoc_body') return false;
  const start = node.parent?.namedChildren.find((child) => child?.type === 'heredoc_start');
  return start !== undefined && start !== null && /['"\\]/.test(start.text);
}

/** `source` with the given ranges replaced by letters (same length, so indexes still match). */
function blankOut(source: string, ranges: ReadonlyArray<[number, number]>): string {
  if (ranges.length === 0) return source;
  const characters = [...source.split('')];
  for (const [start, end] of ranges) {
    for (let index = start; index < end; index++) characters[index] = 'x';
  }
  return characters.join('');
}

function visitNode(node: ShellSyntaxNode, walk: Walk): void {
  const { analysis } = walk;
  if (node.type === 'ERROR' || node.isMissing) {
    markOpaque(
      analysis,
      `bash cannot parse the line near ${quote(node.text || node.parent?.text || '')}`,
    );
    return;
  }
  switch (node.type) {
    case 'command':
      visitCommand(node, walk);
      return;
    case 'comment': {
      // `#` starts a comment only at the start of a word; after an escaped blank (`\ #`)
      // bash reads it as part of a word, and the grammar would hide the rest of the line.
      const before = walk.source.slice(Math.max(0, node.startIndex - 2), node.startIndex);
      if (node.startIndex > 0 && !/(^|[^\\])[\s;&|()<>]$/.test(before)) {
        markOpaque(
          analysis,
          `a # that bash reads as part of a word was taken for a comment: ${quote(node.text)}`,
        );
      }
      return;
    }
    case 'test_command':
      for (const reason of testCommandReasons(node)) markOpaque(analysis, reason);
      return;
    case 'declaration_command':
    case 'unset_command': {
      const [keyword, ...rest] = node.children;
      const program = keyword?.text ?? node.type;
      const reasons =
        node.type === 'unset_command'
          ? unsetReasons(joinedWords(rest))
          : declarationReasons(
              program,
              rest.flatMap((child) => declaredWord(child)),
            );
      for (const reason of reasons) markOpaque(analysis, reason);
      analysis.commands.push({
        program,
        args: rest.flatMap((child) =>
          child?.isNamed ? [withShellExpansions(shellWordOf(child))] : [],
        ),
        assignments: [],
        origin: walk.origin,
        text: node.text,
      });
      return;
    }
    case 'file_redirect':
      visitRedirect(node, analysis);
      return;
    case 'heredoc_end': {
      // Bash ends a here-document only at a line holding the delimiter alone (after tabs,
      // for `<<-`); the grammar also ends it at `EOF; more`, and would misread what follows.
      const lineStart = walk.source.lastIndexOf('\n', node.startIndex - 1) + 1;
      const before = walk.source.slice(lineStart, node.startIndex);
      const after = walk.source[node.endIndex];
      if (!/^\t*$/.test(before) || (after !== undefined && after !== '\n')) {
        markOpaque(
          analysis,
          `the here-document delimiter ${quote(node.text)} shares its line with other text, where bash does not end the here-document`,
        );
      }
      return;
    }
    default:
      return;
  }
}

/** A declaration's argument as a word; an assignment stands for its name (`x[1]=` for `x[1]=$(…)`). */
function declaredWord(node: ShellSyntaxNode | null): ShellWord[] {
  if (node === null || !node.isNamed) return [];
  if (node.type === 'variable_assignment') {
    const name = node.namedChild(0)?.text ?? '';
    return [{ text: node.text, value: `${name}=`, mayExpand: false }];
  }
  return [wordOfArgument(node)];
}

/** A declaration's or `unset`'s argument as a word (the grammar gives plain names their own type). */
function wordOfArgument(node: ShellSyntaxNode): ShellWord {
  if (node.type === 'variable_name') return { text: node.text, value: node.text, mayExpand: false };
  return withShellExpansions(shellWordOf(node));
}

/** Named nodes joined into the words bash sees (the grammar splits `unset a[1]` into `a` and `[1]`). */
function joinedWords(nodes: ReadonlyArray<ShellSyntaxNode | null>): ShellWord[] {
  const words: ShellWord[] = [];
  let previousEnd = -1;
  for (const node of nodes) {
    if (node === null || !node.isNamed) continue;
    const word = wordOfArgument(node);
    const last = words.at(-1);
    if (last !== undefined && node.startIndex === previousEnd) {
      const value =
        last.value === undefined || word.value === undefined ? undefined : last.value + word.value;
      words[words.length - 1] = withShellExpansions({
        text: last.text + word.text,
        ...(value === undefined ? {} : { value }),
        mayExpand: last.mayExpand || word.mayExpand,
      });
    } else {
      words.push(word);
    }
    previousEnd = node.endIndex;
  }
  return words;
}

function visitRedirect(node: ShellSyntaxNode, analysis: ShellAnalysis): void {
  const operator = node.children.find((child) => child !== null && !child.isNamed)?.type ?? '';
  const targetNode =
    node.childForFieldName('destination') ??
    node.namedChildren.filter((child) => child?.type !== 'file_descriptor').at(-1) ??
    null;
  if (targetNode === null) return;
  const target = withShellExpansions(shellWordOf(targetNode));
  const isDescriptorCopy =
    (operator === '>&' || operator === '<&') && /^(\d+-?|-)$/.test(target.value ?? '');
  if (isDescriptorCopy || operator === '<&') return;
  if (operator === '<' || operator === '<>') analysis.readFiles.push(target);
  if (operator === '<') return;
  if (target.value !== undefined && harmlessTargets.has(target.value)) return;
  analysis.writtenFiles.push(target);
}

/** True when the backslash just before `index` is itself unescaped (an odd run of backslashes). */
function escapes(source: string, backslashIndex: number): boolean {
  let count = 0;
  while (source[backslashIndex - count] === '\\') count++;
  return count % 2 === 1;
}

/**
 * The grammar skips escaped blanks (`\ `) at the edges of a word as if they were spaces;
 * bash keeps them in the word (`"a"\ b` is one word, "a b"). Puts them back.
 */
function withEscapedBlanks(
  word: ShellWord,
  node: ShellSyntaxNode,
  source: string,
  /** Where the previous word ended: blanks before it already belong to that word. */
  claimedUntil = 0,
): { word: ShellWord; start: number; end: number } {
  const isBlank = (character: string | undefined): boolean =>
    character === ' ' || character === '\t';
  let start = node.startIndex;
  let before = '';
  while (
    start - 2 >= claimedUntil &&
    isBlank(source[start - 1]) &&
    source[start - 2] === '\\' &&
    escapes(source, start - 2)
  ) {
    before = (source[start - 1] ?? '') + before;
    start -= 2;
  }
  let end = node.endIndex;
  let after = '';
  while (source[end] === '\\' && isBlank(source[end + 1]) && escapes(source, end)) {
    after += source[end + 1] ?? '';
    end += 2;
  }
  if (before === '' && after === '') return { word, start, end };
  return {
    word: {
      text: source.slice(start, end),
      ...(word.value === undefined ? {} : { value: before + word.value + after }),
      mayExpand: word.mayExpand,
    },
    start,
    end,
  };
}

/** A backslash between a command's words that belongs to no word (`rm \  x` has a word " "). */
function hasStrayEscapeBetweenWords(node: ShellSyntaxNode, source: string): boolean {
  let previousEnd = node.startIndex;
  for (const child of node.namedChildren) {
    if (child === null) continue;
    const gap = source
      .slice(previousEnd, child.startIndex)
      .replace(/\\\n/g, '')
      .replace(/(?:\\[ \t])+$/, '');
    if (gap.includes('\\')) return true;
    previousEnd = child.endIndex;
  }
  return false;
}

/**
 * The words of a command, name first. The grammar sometimes splits one bash word in two
 * (`"a b"\$x` is one word to bash); nodes with nothing between them are joined back,
 * and each joined word is checked for the expansions bash would apply (`withShellExpansions`).
 */
function commandWords(node: ShellSyntaxNode, source: string): ShellWord[] | undefined {
  const nameNode = node.childForFieldName('name')?.namedChild(0) ?? null;
  if (nameNode === null) return undefined;
  const nodes = [nameNode, ...node.childrenForFieldName('argument')].filter(
    (child): child is ShellSyntaxNode => child !== null,
  );
  const words: ShellWord[] = [];
  let previousEnd = -1;
  for (const child of nodes) {
    const { word, start, end } = withEscapedBlanks(
      shellWordOf(child),
      child,
      source,
      Math.max(previousEnd, 0),
    );
    const last = words.at(-1);
    const joined = last !== undefined && /^(?:\\\n)*$/.test(source.slice(previousEnd, start));
    if (last !== undefined && joined) {
      const value =
        last.value === undefined || word.value === undefined ? undefined : last.value + word.value;
      words[words.length - 1] = {
        text: last.text + word.text,
        ...(value === undefined ? {} : { value }),
        mayExpand: last.mayExpand || word.mayExpand,
      };
    } else {
      words.push(word);
    }
    previousEnd = end;
  }
  return words.map(withShellExpansions);
}

function visitCommand(node: ShellSyntaxNode, walk: Walk): void {
  const { analysis } = walk;
  const words = commandWords(node, walk.source);
  const [name, ...args] = words ?? [];
  if (name === undefined) return;
  if (name.value === undefined || name.mayExpand) {
    markOpaque(analysis, `the program ${quote(name.text)} is only known when the line runs`);
    return;
  }
  const assignments = node.namedChildren.flatMap((child) =>
    child?.type === 'variable_assignment' ? [child.text] : [],
  );
  if (hasStrayEscapeBetweenWords(node, walk.source)) {
    markOpaque(analysis, `an escaped blank stands alone between the words of ${quote(node.text)}`);
  }
  const command: ShellCommand = {
    program: name.value,
    args,
    assignments,
    origin: walk.origin,
    text: node.text,
  };
  analysis.commands.push(command);
  for (const reason of commandEvaluationReasons(command)) markOpaque(analysis, reason);
  followWrapped({ program: name.value, args, node, walk });
}

/** Adds what a command runs besides itself (wrapped commands, shell code in strings). */
function followWrapped(options: {
  program: string;
  args: readonly ShellWord[];
  node: ShellSyntaxNode;
  walk: Walk;
}): void {
  const { node, walk } = options;
  const { analysis } = walk;
  const queue = [{ program: options.program, args: options.args, depth: walk.depth }];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (next.depth > maxDepth) {
      markOpaque(analysis, `commands are wrapped more than ${maxDepth} levels deep`);
      return;
    }
    for (const run of wrappedRuns(basename(next.program), next.args)) {
      switch (run.kind) {
        case 'opaque':
          markOpaque(analysis, run.reason);
          break;
        case 'code':
          analyzeCode({
            source: run.source,
            walk: { analysis, origin: 'code', depth: next.depth + 1, source: run.source },
          });
          break;
        case 'stdin': {
          const input = standardInputOf(node);
          if (input.kind === 'pipe') {
            markOpaque(analysis, `${basename(next.program)} reads shell code from a pipe`);
          } else if (input.kind === 'text') {
            if (input.text === undefined) {
              markOpaque(
                analysis,
                `${basename(next.program)} reads shell code that is only known when the line runs`,
              );
            } else {
              analyzeCode({
                source: input.text,
                walk: { analysis, origin: 'code', depth: next.depth + 1, source: input.text },
              });
            }
          }
          break;
        }
        case 'command': {
          const [programWord, ...args] = run.words;
          if (programWord === undefined) break;
          if (programWord.value === undefined || programWord.mayExpand) {
            markOpaque(
              analysis,
              `the program ${quote(programWord.text)} is only known when the line runs`,
            );
            break;
          }
          const command: ShellCommand = {
            program: programWord.value,
            args,
            assignments: [],
            origin: 'wrapped',
            text: run.words.map((word) => word.text).join(' '),
          };
          analysis.commands.push(command);
          for (const reason of commandEvaluationReasons(command)) markOpaque(analysis, reason);
          queue.push({ program: programWord.value, args, depth: next.depth + 1 });
          break;
        }
      }
    }
  }
}

/**
 * Analyses a shell line synchronously (the parser must be loaded: `await
 * loadShellParser()` first, or use `analyzeShellCommand`). Returns every command the
 * line would run — also after wrappers, inside `sh -c`/`bash -c` strings, `$(…)`,
 * backticks, process substitution, pipelines, chains, subshells and groups — plus the
 * files its redirections touch, and whether some part could not be seen through.
 */
export function analyzeShellCommandSync(line: string): ShellAnalysis {
  const analysis: ShellAnalysis = {
    commands: [],
    opaque: false,
    opaqueReasons: [],
    writtenFiles: [],
    readFiles: [],
  };
  analyzeCode({ source: line, walk: { analysis, origin: 'line', depth: 0, source: line } });
  return analysis;
}

/** Analyses a shell line (see `analyzeShellCommandSync`), loading the bash parser on first use. */
export async function analyzeShellCommand(line: string): Promise<ShellAnalysis> {
  await loadShellParser();
  return analyzeShellCommandSync(line);
}
