// Bash evaluates some text as code at run time: a variable's value read as an arithmetic
// expression (`$((a))`, `${arr[a]}`, `[[ $a -eq 1 ]]`), as a variable name (`${!a}`,
// `printf -v "$a"`, `[[ -v $a ]]`) or as a prompt string (`${a@P}`, `PS4`). Such a value may
// hold `b[$(command)]` or `$(command)`, which runs when it is evaluated, so a line that
// evaluates anything not written literally in it hides commands from the analysis.
import { basename } from 'node:path';
import type { ShellSyntaxNode } from './shell-parser.js';
import { type ShellWord, shellWordOf } from './shell-word.js';
import { withShellExpansions } from './shell-word-expansions.js';

/** What `commandEvaluationReasons` needs of a command. */
type EvaluatedCommand = {
  program: string;
  args: readonly ShellWord[];
  assignments: readonly string[];
};

/**
 * Parameters that always hold a number (`$?`, `$#`, `$$`, `$!`, `${#name}`): harmless where
 * bash evaluates arithmetic.
 */
const numericParameter = /\$(?:[?#$!]|\{(?:[?#$!]|#[A-Za-z_]\w*)\})/g;

/**
 * True when `text`, read as a bash arithmetic expression, holds only numbers (`12`, `0x1f`,
 * `2#101`), numeric parameters (`$?`, `$#`, `${#name}`) and operators: nothing bash would look
 * up and evaluate.
 */
export function isLiteralArithmetic(text: string): boolean {
  const numbers = text.replace(numericParameter, ' 0 ').replace(/(?<![\w#@])\d[\w#@]*/g, ' ');
  return /^[\s+\-*/%<>=!&|^~?:(),]*$/.test(numbers);
}

/** True for a variable name bash uses as written: `name`, or `name[…]` with a number, `@` or `*`. */
export function isPlainVariableName(value: string): boolean {
  return /^[A-Za-z_]\w*(?:\[(?:-?\d+|@|\*)\])?$/.test(value);
}

/** Variables whose values bash reads as code: prompt strings, and functions passed to a child bash. */
const codeVariable = /^(?:PS[0-4]|PROMPT_COMMAND|BASH_FUNC_.*)$/s;

/** The name an assignment word (`name=…`, `name[…]+=…`) assigns to, or undefined when it is none. */
function assignedName(value: string): string | undefined {
  return /^(BASH_FUNC_[^=]*|[A-Za-z_]\w*)(?:\[[^\]]*\])?\+?=/s.exec(value)?.[1];
}

function shown(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/** Index of the bracket closing the one opened just before `start` (`(`/`)`, `[`/`]`, `{`/`}`), or -1. */
function closingIndex(text: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let index = start; index < text.length; index++) {
    const character = text[index];
    if (character === '\\') index++;
    else if (character === open) depth++;
    else if (character === close) {
      if (depth === 0) return index;
      depth--;
    }
  }
  return -1;
}

/** Index of the `))` closing an arithmetic expression whose text starts at `start`, or -1. */
function arithmeticEnd(text: string, start: number): number {
  let depth = 0;
  for (let index = start; index < text.length; index++) {
    const character = text[index];
    if (character === '\\') index++;
    else if (character === '(') depth++;
    else if (character === ')') {
      if (depth === 0 && text[index + 1] === ')') return index;
      depth = Math.max(0, depth - 1);
    }
  }
  return -1;
}

const safeTransformations = new Set(['Q', 'E', 'A', 'a', 'U', 'u', 'L', 'K', 'k']);

/** Why a `${…}` expansion whose body starts at `start` evaluates a value, or undefined. */
function parameterExpansionReason(text: string, start: number): string | undefined {
  let index = start;
  const end = closingIndex(text, start, '{', '}');
  const expansion = text.slice(start - 2, end === -1 ? text.length : end + 1);
  if (text[index] === '!' && text[index + 1] !== '}') {
    index++;
    const name = /^[A-Za-z_]\w*/.exec(text.slice(index))?.[0];
    const rest = name === undefined ? '' : text.slice(index + name.length);
    // `${!prefix*}`, `${!prefix@}` list names and `${!name[@]}` lists keys; nothing is evaluated.
    if (name !== undefined && /^(?:[@*]|\[[@*]\])\}/.test(rest)) return undefined;
    return `${shown(expansion)} takes a variable name from a value (indirection), and bash evaluates what that name holds`;
  }
  if (text[index] === '#' && text[index + 1] !== '}') index++;
  const name = /^(?:[A-Za-z_]\w*|\d+|[-@*#?$!])/.exec(text.slice(index))?.[0];
  if (name === undefined) return `${shown(expansion)} is an expansion this analysis does not read`;
  index += name.length;
  if (text[index] === '[') {
    const close = closingIndex(text, index + 1, '[', ']');
    const subscript = text.slice(index + 1, close === -1 ? text.length : close);
    if (close === -1 || (subscript !== '@' && subscript !== '*' && !isLiteralArithmetic(subscript)))
      return `the subscript of ${shown(expansion)} is evaluated as arithmetic, which runs code held in variables`;
    index = close + 1;
  }
  const operator = text[index];
  if (operator === ':' && !/^[-=?+]$/.test(text[index + 1] ?? '')) {
    const range = text.slice(index + 1, end === -1 ? text.length : end);
    if (!isLiteralArithmetic(range))
      return `the offset of ${shown(expansion)} is evaluated as arithmetic, which runs code held in variables`;
  }
  if (operator === '@' && !safeTransformations.has(text[index + 1] ?? '')) {
    return `${shown(expansion)} expands a value as a prompt string (or a transformation this analysis does not know), which runs the command substitutions it holds`;
  }
  return undefined;
}

/**
 * Why bash may evaluate code held in a value somewhere in `text` (shell source whose
 * single-quoted strings, comments and quoted here-documents are blanked out): arithmetic
 * (`$((…))`, `$[…]`, `((…))`, subscripts, `${x:offset}`) on anything but numbers,
 * indirection (`${!x}`), prompt expansion (`${x@P}`), and assignments to `PS4` and the like.
 * Returns one reason per construct, in source order.
 */
export function evaluatedValueReasons(text: string): string[] {
  const reasons: string[] = [];
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === '\\') {
      index++;
      continue;
    }
    const arithmeticStart = text.startsWith('$((', index)
      ? index + 3
      : text.startsWith('((', index) && text[index - 1] !== '$'
        ? index + 2
        : undefined;
    if (arithmeticStart !== undefined) {
      const end = arithmeticEnd(text, arithmeticStart);
      const body = text.slice(arithmeticStart, end === -1 ? text.length : end);
      if (end === -1 || !isLiteralArithmetic(body)) {
        reasons.push(
          `the arithmetic ${shown(text.slice(index, end === -1 ? text.length : end + 2))} evaluates variables, which runs code held in their values`,
        );
      }
      continue;
    }
    if (text.startsWith('$[', index)) {
      const end = closingIndex(text, index + 2, '[', ']');
      if (end === -1 || !isLiteralArithmetic(text.slice(index + 2, end))) {
        reasons.push(
          `the arithmetic ${shown(text.slice(index, end === -1 ? text.length : end + 1))} evaluates variables, which runs code held in their values`,
        );
      }
      continue;
    }
    if (text.startsWith('${', index)) {
      const reason = parameterExpansionReason(text, index + 2);
      if (reason !== undefined) reasons.push(reason);
      continue;
    }
    if (character === '[' && text[index - 1] !== '$') {
      // `name[…]=`, `(… [i]=…)` and `{name[…]}>file` evaluate their subscript as arithmetic.
      const close = closingIndex(text, index + 1, '[', ']');
      if (close === -1) continue;
      const after = text.slice(close + 1, close + 3);
      const assigns = after.startsWith('=') || after.startsWith('+=');
      const namesDescriptor = /^\}[<>]/.test(after);
      const subscript = text.slice(index + 1, close);
      if ((assigns || namesDescriptor) && !isLiteralArithmetic(subscript)) {
        reasons.push(
          `the subscript ${shown(`[${subscript}]`)} is evaluated as arithmetic, which runs code held in variables`,
        );
      }
      continue;
    }
    const startsWord = index === 0 || /[\s;&|()`{}"']/.test(text[index - 1] ?? '');
    if (startsWord && /[A-Z]/.test(character ?? '')) {
      const name = assignedName(text.slice(index, index + 4096));
      if (name !== undefined && codeVariable.test(name)) {
        reasons.push(`the line sets ${name}, whose value bash runs as code`);
      }
    }
  }
  return reasons;
}

/** Why `[[ … ]]` operands evaluate code: `-eq` and the other arithmetic tests, and `-v`. */
export const arithmeticTestOperators = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

/** Builtins that declare variables (`declare -i` and `-n` make later values evaluated). */
const declarationBuiltins = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);

/**
 * Why a declaration's words make bash evaluate values: an option that gives the integer or
 * nameref attribute (`-i`, `-n`), or a name only known at run time or with a subscript that is
 * not a number.
 */
export function declarationReasons(program: string, words: readonly ShellWord[]): string[] {
  const reasons: string[] = [];
  for (const word of words) {
    const value = word.value;
    if (value === undefined) {
      reasons.push(
        `${program} gets ${shown(word.text)}, a name only known when the line runs, and bash evaluates the subscript a name holds`,
      );
    } else if (/^[-+]/.test(value)) {
      if (/[in]/.test(value))
        reasons.push(
          `${program} ${value} makes bash evaluate the values given to the variable (as arithmetic or as a name)`,
        );
    } else {
      const name = value.includes('=') ? value.slice(0, value.search(/\+?=/)) : value;
      if (!isPlainVariableName(name)) {
        reasons.push(`${program} gets the name ${shown(name)}, whose subscript bash evaluates`);
      } else if (codeVariable.test(name.replace(/\[.*$/s, ''))) {
        reasons.push(`the line sets ${name}, whose value bash runs as code`);
      }
    }
  }
  return reasons;
}

/** The name arguments of `read` (after its options; `-a NAME` too), or undefined when one is unknown. */
function readNames(args: readonly ShellWord[]): ShellWord[] | undefined {
  const names: ShellWord[] = [];
  let operands = false;
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === undefined) continue;
    const value = word.value;
    if (value === undefined) return undefined;
    if (operands || !value.startsWith('-') || value === '-') {
      names.push(word);
      continue;
    }
    if (value === '--') {
      operands = true;
      continue;
    }
    for (let letter = 1; letter < value.length; letter++) {
      const option = value[letter] ?? '';
      if (!'adinNptu'.includes(option)) continue;
      const attached = value.slice(letter + 1);
      const argument =
        attached === '' ? args[++index] : { text: attached, value: attached, mayExpand: false };
      if (option === 'a' && argument !== undefined) names.push(argument);
      break;
    }
  }
  return names;
}

function nameReasons(program: string, names: readonly (ShellWord | undefined)[]): string[] {
  return names.flatMap((word) => {
    if (word === undefined) return [];
    if (word.value === undefined || word.mayExpand)
      return [
        `${program} gets ${shown(word.text)} as a variable name only known when the line runs, and bash evaluates the subscript a name holds`,
      ];
    if (!isPlainVariableName(word.value))
      return [`${program} gets the name ${shown(word.value)}, whose subscript bash evaluates`];
    if (codeVariable.test(word.value))
      return [`the line sets ${word.value}, whose value bash runs as code`];
    return [];
  });
}

/** Why `unset`'s words make bash evaluate a subscript (`unset 'a[$i]'`). */
export function unsetReasons(words: readonly ShellWord[]): string[] {
  return nameReasons(
    'unset',
    words.filter((word) => !/^-[fvn]+$/.test(word.value ?? '')),
  );
}

/** The word after option `letter` (`-v NAME` or `-vNAME`) among `args`. */
function optionArgument(args: readonly ShellWord[], letter: string): ShellWord[] {
  const found: ShellWord[] = [];
  for (let index = 0; index < args.length; index++) {
    const value = args[index]?.value;
    if (value === undefined || !value.startsWith('-') || value.startsWith('--')) continue;
    const at = value.indexOf(letter);
    if (at < 1) continue;
    const attached = value.slice(at + 1);
    const next = args[index + 1];
    if (attached !== '') found.push({ text: attached, value: attached, mayExpand: false });
    else if (next !== undefined) found.push(next);
  }
  return found;
}

/**
 * Why a command makes bash evaluate code held in a value: builtins that take variable names
 * (`printf -v`, `read`, `getopts`, `wait -p`, `test -v`, and `declare`-like builtins reached
 * through a wrapper such as `builtin`), `let`, builtins that run a callback (`mapfile -C`,
 * `compgen -C`/`-F`), and assignments to variables bash runs as code (`PS4`, `BASH_FUNC_…`,
 * also through `env`).
 */
export function commandEvaluationReasons(command: EvaluatedCommand): string[] {
  const program = basename(command.program);
  const { args } = command;
  const reasons: string[] = [];
  for (const text of [...command.assignments, ...args.map((word) => word.value ?? '')]) {
    const name = assignedName(text);
    if (name !== undefined && codeVariable.test(name))
      reasons.push(`the line sets ${name}, whose value bash runs as code`);
  }
  switch (program) {
    case 'printf': {
      const first = args[0];
      if (first !== undefined && (first.value === undefined || first.mayExpand)) {
        reasons.push(
          `printf gets ${shown(first.text)} first, which could be -v and a variable name whose subscript bash evaluates`,
        );
      } else if (first?.value?.startsWith('-v') === true) {
        reasons.push(...nameReasons(program, optionArgument(args.slice(0, 2), 'v')));
      }
      break;
    }
    case 'read': {
      const names = readNames(args);
      if (names === undefined)
        reasons.push(
          'read gets a word only known when the line runs, which could name a variable whose subscript bash evaluates',
        );
      else reasons.push(...nameReasons(program, names));
      break;
    }
    case 'getopts':
      reasons.push(...nameReasons(program, [args[1]]));
      break;
    case 'wait':
      reasons.push(...nameReasons(program, optionArgument(args, 'p')));
      break;
    case 'test':
    case '[':
    case '[[':
      reasons.push(...testReasons(program, args));
      break;
    case 'let':
      if (!args.every((word) => word.value !== undefined && isLiteralArithmetic(word.value)))
        reasons.push(
          'let evaluates its arguments as arithmetic, which runs code held in variables',
        );
      break;
    case 'mapfile':
    case 'readarray':
      if (optionArgument(args, 'C').length > 0) reasons.push(`${program} -C runs a callback`);
      break;
    case 'compgen':
    case 'complete':
      if (optionArgument(args, 'C').length > 0 || optionArgument(args, 'F').length > 0)
        reasons.push(`${program} -C/-F runs a command or function`);
      break;
    case 'unset':
      reasons.push(...unsetReasons(args));
      break;
    default:
      if (declarationBuiltins.has(program)) reasons.push(...declarationReasons(program, args));
  }
  return reasons;
}

/**
 * Why a `test`/`[` (or a `[[` the grammar read as a command) evaluates a value: `-v NAME` with a
 * name that is not plain, an unquoted expansion (which could split into `-v` and a name), and
 * for `[[` an arithmetic comparison.
 */
function testReasons(program: string, args: readonly ShellWord[]): string[] {
  const reasons: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index];
    if (word === undefined) continue;
    if (word.value === undefined && word.mayExpand) {
      reasons.push(
        `${program} gets ${shown(word.text)}, which could split into -v and a variable name whose subscript bash evaluates`,
      );
    } else if (word.value === '-v' || word.value === '-R') {
      reasons.push(...nameReasons(program, [args[index + 1]]));
    } else if (program === '[[' && arithmeticTestOperators.has(word.value ?? '')) {
      reasons.push(`[[ ${word.value} evaluates its operands as arithmetic`);
    }
  }
  return reasons;
}

const wordTypes = new Set([
  'word',
  'concatenation',
  'simple_expansion',
  'expansion',
  'command_substitution',
  'arithmetic_expansion',
  'number',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
]);

/** True for a `[[` operand bash evaluates to a number without running anything. */
function isLiteralOperand(node: ShellSyntaxNode): boolean {
  const word = withShellExpansions(shellWordOf(node));
  if (word.value !== undefined && isLiteralArithmetic(word.value)) return true;
  return isLiteralArithmetic(node.text.replace(/^"(.*)"$/s, '$1'));
}

/**
 * Why a `[[ … ]]` test evaluates code held in a value: an arithmetic comparison (`-eq`, `-lt`,
 * …) whose operands are not numbers, or `-v`/`-R` of a name that is not plain. A test whose
 * text holds more such operators than the grammar found is refused as well.
 */
export function testCommandReasons(node: ShellSyntaxNode): string[] {
  const reasons: string[] = [];
  // `[ … ]` (the test builtin) compares numbers without evaluating them; `[[ … ]]` evaluates.
  const keyword = node.child(0)?.type === '[[' ? '[[' : '[';
  let checked = 0;
  const stack: ShellSyntaxNode[] = [node];
  for (let current = stack.pop(); current !== undefined; current = stack.pop()) {
    const parent = current.parent;
    if (keyword === '[' && wordTypes.has(current.type)) {
      // Word splitting and globbing can turn one word into `-v` and a name.
      if (withShellExpansions(shellWordOf(current)).mayExpand)
        reasons.push(
          `[ gets ${shown(current.text)}, which could split into -v and a variable name whose subscript bash evaluates`,
        );
      continue;
    }
    for (const child of current.namedChildren) if (child !== null) stack.push(child);
    if (current.type !== 'test_operator' || parent === null) continue;
    const operator = current.text;
    if (arithmeticTestOperators.has(operator)) {
      if (keyword === '[') continue;
      checked++;
      const operands = parent.namedChildren.filter(
        (operand): operand is ShellSyntaxNode => operand !== null && operand.id !== current.id,
      );
      const evaluated = operands.find((operand) => !isLiteralOperand(operand));
      if (evaluated !== undefined)
        reasons.push(
          `[[ ${operator} ]] evaluates ${shown(evaluated.text)} as arithmetic, which runs code held in variables`,
        );
    } else if (operator === '-v' || operator === '-R') {
      checked++;
      const operand = current.nextNamedSibling;
      const word = operand === null ? undefined : withShellExpansions(shellWordOf(operand));
      reasons.push(
        ...nameReasons(`${keyword} ${operator}`, [word && { ...word, mayExpand: false }]),
      );
    }
  }
  const counted =
    keyword === '[['
      ? /(?<![^\s(!])-(?:eq|ne|lt|le|gt|ge|v|R)(?![^\s)])/g
      : /(?<![^\s(!])-[vR](?![^\s)])/g;
  const written = node.text.match(counted)?.length ?? 0;
  if (written > checked)
    reasons.push(`${shown(node.text)} holds an arithmetic or -v test this analysis does not read`);
  return reasons;
}
