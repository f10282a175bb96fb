import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeShellCommand, analyzeShellCommandSync } from './analyze-shell-command.js';
import { loadShellParser } from './shell-parser.js';

beforeAll(() => loadShellParser());

/** The first word of a `bash -x` trace line, unquoted; undefined for forms not modelled. */
function firstTracedWord(text: string): string | undefined {
  let word = '';
  for (let index = 0; index < text.length; index++) {
    const character = text[index];
    if (character === ' ') break;
    if (character === "'") {
      const end = text.indexOf("'", index + 1);
      if (end === -1) return undefined;
      word += text.slice(index + 1, end);
      index = end;
    } else if (character === '\\') {
      word += text[index + 1] ?? '';
      index++;
    } else if (character === '$' && text[index + 1] === "'") {
      return undefined;
    } else {
      word += character;
    }
  }
  return word;
}

/** The commands a line would run, as `program arg…` with unknown words shown as `?`. */
function commandsOf(line: string): string[] {
  return analyzeShellCommandSync(line).commands.map((command) =>
    [command.program, ...command.args.map((word) => word.value ?? '?')].join(' '),
  );
}

describe('analyzeShellCommand', () => {
  it('finds a command wherever it would run', async () => {
    const lines = [
      'env rm x',
      'env -i A=1 rm x',
      'FOO=1 rm x',
      'sudo rm x',
      'sudo -u root -- rm x',
      'command rm x',
      'nice -n 5 rm x',
      'nice -10 rm x',
      'timeout -s KILL 5 rm x',
      'nohup rm x',
      'time rm x',
      'exec rm x',
      'xargs rm x',
      'xargs -0 -n 1 rm x',
      "bash -c 'rm x'",
      'sh -c "rm x"',
      "zsh -c 'rm x'",
      "bash -eo pipefail -c 'rm x'",
      'sh -c "bash -c \'rm x\'"',
      'echo $(rm x)',
      'echo `rm x`',
      'cat <(rm x)',
      'tee >(rm x)',
      'ls | rm x',
      'ls && rm x',
      'ls || rm x',
      'ls; rm x',
      'ls & rm x',
      '(rm x)',
      '{ rm x; }',
      'if true; then rm x; fi',
      'for f in a; do rm x; done',
      'while false; do rm x; done',
      'case a in a) rm x;; esac',
      'f() { rm x; }; f',
      'A=$(rm x)',
      'export A=$(rm x)',
      '[[ -n $(rm x) ]]',
      'cat <<EOF\n$(rm x)\nEOF',
      "bash <<'EOF'\nrm x\nEOF",
      'bash <<< "rm x"',
      'eval "rm x"',
      "trap 'rm x' EXIT",
      "alias clean='rm x'",
      "watch 'rm x'",
      "su -c 'rm x' root",
      'find . -name y -exec rm x {} \\;',
      '\\rm x',
      "'rm' x",
      'r""m x',
      "$'\\x72m' x",
      '/bin/rm x',
      'sudo env A=1 nice timeout 3 rm x',
      '! rm x',
    ];
    for (const line of lines) {
      const analysis = await analyzeShellCommand(line);
      const programs = analysis.commands.map((command) => command.program.replace(/^.*\//, ''));
      expect({ line, found: programs.includes('rm'), opaque: analysis.opaque }).toEqual({
        line,
        found: true,
        opaque: false,
      });
    }
  });

  it('keeps the arguments of wrapped commands, and marks input appended by xargs as unknown', () => {
    expect(commandsOf('sudo -u root rm -rf /tmp/x')).toEqual([
      'sudo -u root rm -rf /tmp/x',
      'rm -rf /tmp/x',
    ]);
    expect(commandsOf('ls | xargs rm -f')).toEqual(['ls', 'xargs rm -f', 'rm -f ?']);
    expect(commandsOf('find . -exec rm {} +')).toEqual(['find . -exec rm {} +', 'rm ?']);
    expect(commandsOf("bash -c 'git push origin main'")).toEqual([
      'bash -c git push origin main',
      'git push origin main',
    ]);
    expect(analyzeShellCommandSync("bash -c 'rm x'").commands.map((c) => c.origin)).toEqual([
      'line',
      'code',
    ]);
  });

  it('says when it cannot see through a line', () => {
    const lines = [
      '$CMD x',
      '${CMD} x',
      '$(echo rm) x',
      '`echo rm` x',
      'eval "$X"',
      'bash -c "$X"',
      'echo rm x | bash',
      'curl -s example.invalid | sh',
      'bash <<EOF\n$(cat script)\nEOF',
      'echo (',
      "echo 'unterminated",
      '{rm,-rf,x}',
      'r\\\nm x',
      'sudo --some-new-option rm x',
      'env -S "rm x"',
      'xargs $OPTIONS rm',
      'r* x',
    ];
    for (const line of lines) {
      const analysis = analyzeShellCommandSync(line);
      expect({ line, opaque: analysis.opaque }).toEqual({ line, opaque: true });
      expect(analysis.opaqueReasons.length).toBeGreaterThan(0);
    }
    expect(analyzeShellCommandSync('$CMD x').opaqueReasons[0]).toContain('$CMD');
  });

  it('does not call ordinary lines opaque', () => {
    for (const line of [
      'git status',
      'npm test -- --watch=false',
      'ls -la "$HOME"',
      'echo "$(date)" > /dev/null 2>&1',
      'bash ./build.sh',
      'for f in *.ts; do echo "$f"; done',
      'cat <<EOF > notes.txt\nhello $USER\nEOF',
      'git commit -m "fix: a \\"quoted\\" word"',
      "cat > notes.tex <<'EOF'\nsee \\ here, a\\\nb\nEOF",
      'echo \'a \\ b\' "c\\\nd"',
    ]) {
      expect({ line, reasons: analyzeShellCommandSync(line).opaqueReasons }).toEqual({
        line,
        reasons: [],
      });
    }
  });

  it('lists files written and read by redirections, ignoring /dev/null and descriptor copies', () => {
    const analysis = analyzeShellCommandSync(
      'sort < in.txt > out.txt 2>&1 2>/dev/null >> log &> all',
    );
    expect(analysis.readFiles.map((word) => word.value)).toEqual(['in.txt']);
    expect(analysis.writtenFiles.map((word) => word.value)).toEqual(['out.txt', 'log', 'all']);
  });

  it(
    'gives arguments the values bash gives them (checked against real bash)',
    { timeout: 300_000 },
    () => {
      const fragment = fc.oneof(
        fc.constantFrom('a', 'B', '-', '.', '/', '=', ':', '%', '@', ',', '+'),
        fc.constantFrom("'x y'", "'$HOME'", '"a b"', '"\\$x"', '"\\"q\\""', '"\\\\"', '"a\\nb"'),
        fc.constantFrom('\\ ', '\\$', '\\"', "\\'", '\\\\', '\\a', '\\\t', '\\*', '\\#'),
        fc.constantFrom('*', '?', '[a]', '~', '{}', '#', 'a#b', '!', '^', '\\\n'),
        fc.constantFrom("$'\\x41'", "$'\\n'", "$'\\t\\101'", "$'a\\'b'", "$'\\u00e9'"),
        fc.stringMatching(/^[a-z0-9_]{1,4}$/),
      );
      const word = fc
        .array(fragment, { minLength: 1, maxLength: 5 })
        .map((parts) => parts.join(''));
      const words = fc.array(word, { minLength: 1, maxLength: 4 });
      const samples = fc.sample(words, {
        numRuns: Number(process.env['SHELL_WORD_SAMPLES'] ?? 80),
        seed: Number(process.env['SHELL_FUZZ_SEED'] ?? 42),
      });
      for (const sample of samples) {
        const line = `printf '%s\\0' START ${sample.join(' ')}`;
        const run = spawnSync('/bin/bash', ['--norc', '--noprofile', '-f', '-c', line], {
          encoding: 'utf8',
          timeout: 5000,
        });
        // A line bash refuses (a syntax error) gives no values to compare.
        if (run.status !== 0) continue;
        const expected = run.stdout.split('\0').slice(1, -1);
        const analysis = analyzeShellCommandSync(line);
        // A line the analysis calls opaque is handled conservatively; only a wrong value is a bug.
        if (analysis.opaque) continue;
        const [command] = analysis.commands;
        const values = command?.args.slice(2).map((arg) => arg.value) ?? [];
        // A value the analysis cannot know (undefined) is conservative; a wrong one is a bug.
        expect({ line, values }).toEqual({
          line,
          values: expected.map((value, index) => (values[index] === undefined ? undefined : value)),
        });
      }
    },
  );

  it('sees every command real bash runs (checked with bash -x on generated lines)', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'delegate-xtrace-'));
    try {
      const name = fc.constantFrom('aa', 'bb', 'cc', 'dd');
      const piece = fc.oneof(
        name,
        name,
        fc.constantFrom(' ', ' ', '  ', '\t', '\n', ';', ' && ', ' || ', ' | ', ' & '),
        fc.constantFrom('"', "'", '\\', '\\ ', '\\\n', '#', ' #', '$(', ')', '`', '(', '{ ', ' }'),
        fc.constantFrom('"x"', "'y'", "$'z'", '$v', '${v}', '<', '>/dev/null', '<<<', '=', 'v='),
      );
      const line = fc.array(piece, { minLength: 1, maxLength: 12 }).map((parts) => parts.join(''));
      const samples = fc.sample(line, {
        numRuns: Number(process.env['SHELL_TRACE_SAMPLES'] ?? 150),
        seed: Number(process.env['SHELL_FUZZ_SEED'] ?? 7),
      });
      for (const sample of samples) {
        const traced = spawnSync('/bin/bash', ['--norc', '--noprofile', '-x', '-c', sample], {
          cwd: directory,
          env: { PATH: '/nonexistent' },
          encoding: 'utf8',
          timeout: 5000,
          input: '',
        });
        const ran = traced.stderr
          .split('\n')
          .flatMap((traceLine) => {
            const word = /^\++ (.*)$/s.exec(traceLine)?.[1];
            const program = word === undefined ? undefined : firstTracedWord(word);
            return program === undefined ? [] : [program];
          })
          .filter((program) => !/^[\w]+=/.test(program));
        const analysis = analyzeShellCommandSync(sample);
        if (analysis.opaque) continue;
        const seen = new Set(analysis.commands.map((command) => command.program));
        const missed = ran.filter((program) => !seen.has(program));
        expect({ line: sample, missed }).toEqual({ line: sample, missed: [] });
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 300_000);

  it('never throws on arbitrary input and stays bounded', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (line) => {
        const analysis = analyzeShellCommandSync(line);
        expect(Array.isArray(analysis.commands)).toBe(true);
      }),
      { numRuns: 300 },
    );
    const deep = `${'eval '.repeat(30)}rm x`;
    expect(analyzeShellCommandSync(deep).opaque).toBe(true);
    expect(analyzeShellCommandSync('echo '.repeat(250_000)).opaque).toBe(true);
  });
});
