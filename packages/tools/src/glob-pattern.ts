import { DelegateError } from '@delegate/core';

const regexSpecial = /[\\^$.*+?()[\]{}|/]/;

function escapeCharacter(character: string): string {
  return regexSpecial.test(character) ? `\\${character}` : character;
}

/** Finds the index of the bracket that closes the character class opened at `start`, or -1. */
function findClassEnd(pattern: string, start: number): number {
  let index = start + 1;
  if (pattern[index] === '!' || pattern[index] === '^') index++;
  if (pattern[index] === ']') index++;
  for (; index < pattern.length; index++) {
    if (pattern[index] === '\\') index++;
    else if (pattern[index] === ']') return index;
  }
  return -1;
}

function translateClass(body: string): string {
  let negated = false;
  let rest = body;
  if (rest.startsWith('!') || rest.startsWith('^')) {
    negated = true;
    rest = rest.slice(1);
  }
  let out = '';
  for (let index = 0; index < rest.length; index++) {
    const character = rest[index] ?? '';
    if (character === '\\') {
      out += `\\${rest[index + 1] ?? '\\'}`;
      index++;
    } else if (character === '-') {
      out += '-';
    } else {
      out += /[\]\\^[]/.test(character) ? `\\${character}` : character;
    }
  }
  // A class never matches the path separator.
  return negated ? `[^/${out}]` : `(?!/)[${out}]`;
}

function translate(pattern: string, braceDepth: number): string {
  let out = '';
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index] ?? '';
    switch (character) {
      case '\\': {
        const next = pattern[index + 1];
        if (next !== undefined) {
          out += escapeCharacter(next);
          index++;
        } else out += '\\\\';
        break;
      }
      case '*': {
        if (pattern[index + 1] === '*') {
          const atSegmentStart = index === 0 || pattern[index - 1] === '/';
          let end = index + 2;
          while (pattern[end] === '*') end++;
          const atSegmentEnd = end === pattern.length || pattern[end] === '/';
          if (atSegmentStart && atSegmentEnd) {
            if (pattern[end] === '/') {
              // `**/` matches zero or more whole directories.
              out += '(?:[^/]*/)*';
              index = end;
            } else {
              out += '.*';
              index = end - 1;
            }
            break;
          }
          index = end - 1;
        }
        out += '[^/]*';
        break;
      }
      case '?':
        out += '[^/]';
        break;
      case '[': {
        const end = findClassEnd(pattern, index);
        if (end === -1) out += '\\[';
        else {
          out += translateClass(pattern.slice(index + 1, end));
          index = end;
        }
        break;
      }
      case '{': {
        const end = findBraceEnd(pattern, index);
        if (end === -1) {
          out += '\\{';
          break;
        }
        const alternatives = splitAlternatives(pattern.slice(index + 1, end));
        if (braceDepth > 10) {
          throw new DelegateError(
            'INVALID_ARGUMENT',
            `Glob pattern ${pattern} nests braces too deeply.`,
          );
        }
        out += `(?:${alternatives.map((alternative) => translate(alternative, braceDepth + 1)).join('|')})`;
        index = end;
        break;
      }
      default:
        out += escapeCharacter(character);
    }
  }
  return out;
}

function findBraceEnd(pattern: string, start: number): number {
  let depth = 0;
  for (let index = start; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === '\\') index++;
    else if (character === '{') depth++;
    else if (character === '}') {
      depth--;
      if (depth === 0) return index;
    }
  }
  return -1;
}

function splitAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let index = 0; index < body.length; index++) {
    const character = body[index] ?? '';
    if (character === '\\') {
      current += character + (body[index + 1] ?? '');
      index++;
      continue;
    }
    if (character === '{') depth++;
    if (character === '}') depth--;
    if (character === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += character;
  }
  parts.push(current);
  return parts;
}

/**
 * Compiles a glob (`**`, `*`, `?`, `{a,b}`, `[a-z]`, `[!a]`, `\` escapes) into a RegExp
 * that matches whole `/`-separated relative paths. `*` and `?` never cross a `/`; `**`
 * as a whole segment spans any number of directories. With `matchBase`, a pattern
 * without a `/` matches the file name at any depth (as ripgrep's `--glob` does).
 */
export function compileGlob(pattern: string, options: { matchBase?: boolean } = {}): RegExp {
  let source = pattern.replace(/^\.\//, '');
  if (options.matchBase === true && !source.includes('/')) source = `**/${source}`;
  // `s`: a name may hold line terminators (`\n`, `\r`, U+2028, U+2029), which `.` skips otherwise.
  return new RegExp(`^${translate(source, 0)}$`, 's');
}

/** Splits a glob into its leading directory without any magic characters and the rest. */
export function splitGlobBase(pattern: string): { base: string; rest: string } {
  const segments = pattern.replace(/^\.\//, '').split('/');
  const baseSegments: string[] = [];
  while (segments.length > 1 && !/[*?[\]{}\\]/.test(segments[0] ?? '')) {
    baseSegments.push(segments.shift() ?? '');
  }
  return { base: baseSegments.join('/'), rest: segments.join('/') };
}
