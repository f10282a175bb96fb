import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeShellCommandSync } from './analyze-shell-command.js';
import { loadShellParser } from './shell-parser.js';
import type { ShellWord } from './shell-word.js';

beforeAll(() => loadShellParser());

/** The words of `printf x <words>` as the analysis sees them. */
function argumentsOf(words: string): ShellWord[] {
  return analyzeShellCommandSync(`printf x ${words}`).commands[0]?.args.slice(1) ?? [];
}

describe('withShellExpansions (through analyzeShellCommandSync)', () => {
  it('gives no value to words bash brace-expands, tilde-expands or translates', () => {
    for (const word of [
      '{a,/etc/passwd}',
      '{,/etc/passwd}',
      'x{1..3}',
      'a{"b",c}',
      "{'-'delete,}",
      'x=~/p',
      'x=a:~/b',
      '--file=~/p',
      '~',
      '$"/etc/passwd"',
      'a$"b"',
      "$'\\u00e9'",
      "$'a\\0b'",
      "$'\\xff'",
    ]) {
      const [argument] = argumentsOf(word);
      expect({ word, value: argument?.value }).toEqual({ word, value: undefined });
    }
  });

  it('keeps the value of words bash leaves alone', () => {
    const cases: Array<[string, string]> = [
      ['"{a,b}"', '{a,b}'],
      ["'{1..3}'", '{1..3}'],
      ['\\{a,b\\}', '{a,b}'],
      ['{a}', '{a}'],
      ['HEAD@{1}', 'HEAD@{1}'],
      ['a~b', 'a~b'],
      ['"x=~/p"', 'x=~/p'],
      ["$'\\x41'", 'A'],
    ];
    for (const [word, value] of cases) {
      const [argument] = argumentsOf(word);
      expect({ word, value: argument?.value, mayExpand: argument?.mayExpand }).toEqual({
        word,
        value,
        mayExpand: false,
      });
    }
  });

  it(
    'never gives a word a value bash does not give it (checked against real bash)',
    { timeout: 300_000 },
    () => {
      const fragment = fc.oneof(
        fc.constantFrom('a', '/', '.', '..', ',', '=', ':', '~', '-', '$', '@'),
        fc.constantFrom('{', '}', '{a,b}', '{,/x}', '{1..2}', '{a}', '\\{', '\\,', '"{"', "'}'"),
        fc.constantFrom('$"t"', "$'\\x41'", "$'\\u00e9'", "$'\\0'", "$'\\x2c'", '"~"', "'='"),
        fc.stringMatching(/^[a-z0-9_]{1,3}$/),
      );
      const word = fc
        .array(fragment, { minLength: 1, maxLength: 6 })
        .map((parts) => parts.join(''));
      const samples = fc.sample(word, {
        numRuns: Number(process.env['SHELL_WORD_SAMPLES'] ?? 300),
        seed: Number(process.env['SHELL_FUZZ_SEED'] ?? 11),
      });
      for (const sample of samples) {
        const line = `printf '%s\\0' START ${sample} END`;
        const run = spawnSync('/bin/bash', ['--norc', '--noprofile', '-f', '-c', line], {
          encoding: 'utf8',
          timeout: 5000,
          env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/home-of-the-test' },
        });
        if (run.status !== 0) continue;
        const analysis = analyzeShellCommandSync(line);
        if (analysis.opaque) continue;
        const words = analysis.commands[0]?.args.slice(2, -1) ?? [];
        if (words.length !== 1 || words[0]?.value === undefined || words[0].mayExpand) continue;
        // A word the analysis knows must be exactly the one word bash passes.
        expect({ line, words: run.stdout.split('\0').slice(1, -2) }).toEqual({
          line,
          words: [words[0].value],
        });
      }
    },
  );
});
