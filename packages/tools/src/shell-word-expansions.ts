import { decodeAnsiCString, type ShellWord } from './shell-word.js';

/** One character of a word after quote removal, and whether it was written unquoted. */
type WordCharacter = { character: string; unquoted: boolean };

/** A word's source text read on its own: its characters, or why it cannot be read. */
type WordReading = { characters: WordCharacter[] } | { unreadable: string };

/** `$` followed by one of these starts an expansion (`$x`, `${…}`, `$(…)`, `$[…]`, `$?`). */
const expansionStart = /^[A-Za-z0-9_@*#?$!{([-]$/;

function quoted(text: string): WordCharacter[] {
  return [...text].map((character) => ({ character, unquoted: false }));
}

/** The index just past the `'` that ends a `$'…'` body starting at `start` (backslashes escape). */
function endOfAnsiCString(text: string, start: number): number | undefined {
  for (let index = start; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === "'") return index + 1;
  }
  return undefined;
}

/** Reads a `"…"` string opening at `start`; returns its characters and where it ends. */
function readDoubleQuoted(
  text: string,
  start: number,
): { characters: WordCharacter[]; end: number } | { unreadable: string } {
  const characters: WordCharacter[] = [];
  for (let index = start + 1; index < text.length; index++) {
    const character = text[index] ?? '';
    if (character === '"') return { characters, end: index + 1 };
    if (character === '`') return { unreadable: 'a command substitution' };
    if (character === '$' && expansionStart.test(text[index + 1] ?? '')) {
      return { unreadable: 'an expansion' };
    }
    if (character === '\\' && /^[$`"\\\n]$/.test(text[index + 1] ?? '')) {
      index++;
      if (text[index] !== '\n') characters.push(...quoted(text[index] ?? ''));
      continue;
    }
    characters.push(...quoted(character));
  }
  return { unreadable: 'an unterminated double quote' };
}

/**
 * Reads a word's source text the way bash removes quotes, on its own and without the
 * parser: a second opinion on what the grammar made of it. Anything it does not model
 * (expansions, command substitution, `$"…"`, `$'…'` forms `decodeAnsiCString` refuses)
 * makes the word unreadable.
 */
function readWordText(text: string): WordReading {
  const characters: WordCharacter[] = [];
  for (let index = 0; index < text.length; index++) {
    const character = text[index] ?? '';
    const next = text[index + 1];
    if (character === '\\') {
      if (next === undefined) return { unreadable: 'a backslash ends it' };
      index++;
      if (next !== '\n') characters.push(...quoted(next));
    } else if (character === "'") {
      const end = text.indexOf("'", index + 1);
      if (end === -1) return { unreadable: 'an unterminated single quote' };
      characters.push(...quoted(text.slice(index + 1, end)));
      index = end;
    } else if (character === '"') {
      const read = readDoubleQuoted(text, index);
      if ('unreadable' in read) return read;
      characters.push(...read.characters);
      index = read.end - 1;
    } else if (character === '`') {
      return { unreadable: 'a command substitution' };
    } else if (character === '$' && next === '"') {
      return { unreadable: 'a $"…" string, which bash may translate for the locale' };
    } else if (character === '$' && next === "'") {
      const end = endOfAnsiCString(text, index + 2);
      const decoded =
        end === undefined ? undefined : decodeAnsiCString(text.slice(index + 2, end - 1));
      if (end === undefined || decoded === undefined) {
        return { unreadable: "a $'…' string this analysis does not decode exactly" };
      }
      characters.push(...quoted(decoded));
      index = end - 1;
    } else if (character === '$' && expansionStart.test(next ?? '')) {
      return { unreadable: 'an expansion' };
    } else {
      characters.push({ character, unquoted: true });
    }
  }
  return { characters };
}

/**
 * True when bash may brace-expand the word: an unquoted `{` before an unquoted `}` with a
 * `,` or `..` between them. A superset of bash's rule (which wants the separator unquoted
 * and at the braces' own level), computed from the outermost pair so it stays linear.
 */
function hasBraceExpansion(characters: readonly WordCharacter[]): boolean {
  const open = characters.findIndex((each) => each.unquoted && each.character === '{');
  if (open === -1) return false;
  let close = -1;
  for (let index = characters.length - 1; index > open; index--) {
    const each = characters[index];
    if (each?.unquoted === true && each.character === '}') {
      close = index;
      break;
    }
  }
  if (close === -1) return false;
  const between = characters
    .slice(open + 1, close)
    .map((each) => each.character)
    .join('');
  return between.includes(',') || between.includes('..');
}

/**
 * True when bash may expand a tilde in the word: an unquoted `~` at its start, or after a
 * `=` or `:` (bash expands those in words shaped like assignments, `x=~/p` and
 * `PATH=a:~/bin`, arguments included).
 */
function hasTildeExpansion(characters: readonly WordCharacter[]): boolean {
  return characters.some(
    (each, index) =>
      each.unquoted &&
      each.character === '~' &&
      (index === 0 || /^[=:]$/.test(characters[index - 1]?.character ?? '')),
  );
}

function hasGlob(characters: readonly WordCharacter[]): boolean {
  return characters.some((each) => each.unquoted && /^[*?[]$/.test(each.character));
}

/**
 * Checks a finished word (after the grammar's pieces are joined) against bash's
 * expansions by reading its source text again on its own: brace expansion
 * (`{a,/etc}`, `{1..3}`), tilde expansion (`~`, `x=~/p`, `a:~/b`), `$"…"` locale strings,
 * `$'…'` strings not decoded exactly, or any disagreement with the grammar's value make
 * its value unknown; an unquoted glob marks it as expanding. Words without a value are
 * returned as they are.
 */
export function withShellExpansions(word: ShellWord): ShellWord {
  if (word.value === undefined) return word;
  const reading = readWordText(word.text);
  const unknown: ShellWord = { text: word.text, mayExpand: true };
  if ('unreadable' in reading) return unknown;
  const { characters } = reading;
  const value = characters.map((each) => each.character).join('');
  if (value !== word.value) return unknown;
  if (hasBraceExpansion(characters) || hasTildeExpansion(characters)) return unknown;
  if (!word.mayExpand && hasGlob(characters)) return { ...word, mayExpand: true };
  return word;
}
