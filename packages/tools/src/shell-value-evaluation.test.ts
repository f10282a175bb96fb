import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTempDirectory, removeTempDirectory } from './__fixtures__/test-context.js';
import { analyzeShellCommandSync } from './analyze-shell-command.js';
import { createBashTool } from './bash-tool.js';
import { assessReadOnlyCommand, isReadOnlyCommand } from './read-only-command.js';
import { loadShellParser } from './shell-parser.js';
import { isLiteralArithmetic } from './shell-value-evaluation.js';

let root: string;

beforeAll(() => loadShellParser());
beforeEach(async () => {
  root = await createTempDirectory();
});
afterEach(() => removeTempDirectory(root));

/** Runs `line` with real bash in `root`; true when it created the file `ran`. */
function bashRunsHiddenCommand(line: string): boolean {
  rmSync(join(root, 'ran'), { force: true });
  spawnSync('/bin/bash', ['--norc', '--noprofile', '-c', line], {
    cwd: root,
    encoding: 'utf8',
    timeout: 5000,
    input: '',
  });
  return existsSync(join(root, 'ran'));
}

const code = "'a[$(touch ran)]'";

/** Lines where bash evaluates a value as arithmetic, as a name or as a prompt string. */
const evaluatingLines = [
  'x=\'$(touch ran)\'; echo "${x@P}"',
  "x='`touch ran`'; echo ${x@P}",
  `x=${code}; echo \${!x}`,
  `x=${code}; echo $((x))`,
  `x=${code}; echo "$(($x))"`,
  `x=${code}; echo $[x]`,
  `x=${code}; (( x )); echo`,
  `x=${code}; for ((i=x; 0; )); do :; done; echo`,
  `x=${code}; a=(1); echo \${a[x]}`,
  `x=${code}; a=(1); echo \${a[$x]}`,
  `x=${code}; a=(1); echo \${#a[x]}`,
  `x=${code}; y=hello; echo \${y:x}`,
  `x=${code}; y=hello; echo "\${y:0:x}"`,
  `x=${code}; [[ $x -eq 1 ]]; echo`,
  `x=${code}; [[ 1 -lt x ]]; echo`,
  `x=${code}; [[ -v $x ]]; echo`,
  `[[ -v ${code} ]]; echo`,
  `x=${code}; [ -v "$x" ]; echo`,
  `x='-v a[$(touch\${IFS}ran)]'; [ $x ]; echo`,
  `x=${code}; printf -v "$x" 1`,
  `printf -v ${code} 1`,
  `x=${code}; read "$x" <<< 1`,
  `x=${code}; b[x]=1; echo`,
  `x=${code}; b=([x]=1); echo`,
  `x=${code}; cat {b[x]}</dev/null`,
  `x=${code}; declare -i y; y=x`,
  `x=${code}; declare -n r=$x; echo $r`,
  `x=${code}; let y=x`,
  `x=${code}; b=(1); unset b[x]`,
  `x=${code}; cat <<EOF\n$((x))\nEOF`,
  `x=${code}; echo \${y:-$((x))}`,
  `export x=${code}; bash -c 'echo $((x))'`,
  "PS4='$(touch ran)'; set -x; echo",
  "env 'BASH_FUNC_f%%=() { touch ran; }' bash -c f",
  "mapfile -C 'touch ran' -c 1 lines <<< 1",
  // The grammar ends a here-document at `EOF; …`; bash reads on, up to a line `EOF` alone.
  "cat <<EOF\nx\nEOF; cat <<'EOF'\n$(touch ran)\nEOF",
];

describe('code held in values', () => {
  it('makes every line in which bash evaluates a value opaque and not read-only', () => {
    for (const line of evaluatingLines) {
      // Each example really runs the hidden command in bash.
      expect({ line, runs: bashRunsHiddenCommand(line) }).toEqual({ line, runs: true });
      const analysis = analyzeShellCommandSync(line);
      expect({ line, opaque: analysis.opaque }).toEqual({ line, opaque: true });
      expect(analysis.opaqueReasons.join('\n')).not.toBe('');
      expect({ line, readOnly: isReadOnlyCommand(line) }).toEqual({ line, readOnly: false });
      const assessment = assessReadOnlyCommand({ command: line, cwd: root, roots: [root] });
      expect({ line, insideRoots: assessment.insideRoots }).toEqual({ line, insideRoots: false });
    }
  });

  it('says which construct evaluates a value', () => {
    const reasons = (line: string) => analyzeShellCommandSync(line).opaqueReasons.join('\n');
    expect(reasons('echo "${x@P}"')).toContain('prompt string');
    expect(reasons('echo ${!x}')).toContain('indirection');
    expect(reasons('echo $((a))')).toContain('"$((a))"');
    expect(reasons('[[ $a -eq 1 ]]')).toContain('-eq');
    expect(reasons('PS4=x; set -x')).toContain('PS4');
  });

  it('keeps arithmetic on numbers and expansions that evaluate nothing transparent', () => {
    for (const line of [
      'echo $((1 + 2)) $[3 * 4] $((0x1f + 2#101))',
      '(( 1 < 2 )) && echo yes',
      '[[ $? -eq 0 ]] && echo ok',
      '[[ $# -gt 1 ]] && echo "${#x}"',
      '[ "$x" -eq 1 ] && echo',
      'echo "${a[0]}" "${a[@]}" "${!a[@]}" "${!prefix*}" "${#a[*]}"',
      'echo "${x:-default}" "${x:=1}" "${x:1:2}" "${x: -1}" "${x@Q}" "${x^^}"',
      "echo '$((x)) ${!x} ${x@P}'",
      "cat <<'EOF'\n$((x)) ${!x}\nEOF",
      'local out=$(git status) count',
      'read -r line < notes.txt',
      'printf "%s\\n" "$x"',
      '[[ -v HOME && -n $x ]]',
    ]) {
      expect({ line, reasons: analyzeShellCommandSync(line).opaqueReasons }).toEqual({
        line,
        reasons: [],
      });
    }
    expect(isReadOnlyCommand('echo $((1 + 2)) "${x:-a}"')).toBe(true);
    expect(isLiteralArithmetic(' 1 + 0x1f * 2#10 ')).toBe(true);
    expect(isLiteralArithmetic('a1')).toBe(false);
    expect(isLiteralArithmetic('1 + b[0]')).toBe(false);
  });

  it('does not let the Bash tool call such a line read-only, and bash does run its command', async () => {
    const bash = createBashTool();
    const line = 'x=\'$(touch ran)\'; echo "${x@P}"';
    expect(bash.isReadOnly({ command: line })).toBe(false);
    expect(bash.isConcurrencySafe({ command: line })).toBe(false);
    expect(bashRunsHiddenCommand(line)).toBe(true);
  });

  it('finds every value bash evaluates in generated lines (checked against real bash)', () => {
    const payload = fc.constantFrom(code, "'$(touch ran)'", '"a[\\$(touch ran)]"', "'1'");
    const use = fc.constantFrom(
      '$((V))',
      '$(( V + 1 ))',
      '$[V]',
      '${a[V]}',
      '${a[$V]}',
      '${y:V}',
      '${y:1:V}',
      '${!V}',
      '${V@P}',
      '${V@Q}',
      '${y:-$((V))}',
      '$V',
      '"$V"',
      '${#V}',
      '${V:-1}',
      '${!a[@]}',
    );
    const statement = fc.oneof(
      use.map((text) => `echo ${text}`),
      use.map((text) => `echo "${text}"`),
      use.map((text) => `cat <<EOF\n${text}\nEOF`),
      use.map((text) => `cat <<'EOF'\n${text}\nEOF`),
      fc.constantFrom(
        '(( V ))',
        '[[ $V -eq 1 ]]',
        '[[ V -ne 1 ]]',
        '[[ -v $V ]]',
        '[[ $V == 1 ]]',
        '[ "$V" -eq 1 ]',
        'printf -v "$V" 1',
        'b[V]=1',
        'b=([V]=1)',
        'declare -n r=$V; echo $r',
        'test -n "$V"',
      ),
    );
    const line = fc
      .tuple(payload, fc.array(statement, { minLength: 1, maxLength: 3 }))
      .map(
        ([value, statements]) =>
          `x=${value}; y=hello; a=(1 2); ${statements.map((each) => each.replaceAll('V', 'x')).join('\n')}`,
      );
    const samples = fc.sample(line, {
      numRuns: Number(process.env['SHELL_EVALUATION_SAMPLES'] ?? 120),
      seed: Number(process.env['SHELL_FUZZ_SEED'] ?? 11),
    });
    let ran = 0;
    for (const sample of samples) {
      const runs = bashRunsHiddenCommand(sample);
      if (!runs) continue;
      ran++;
      expect({ line: sample, opaque: analyzeShellCommandSync(sample).opaque }).toEqual({
        line: sample,
        opaque: true,
      });
    }
    // The generator does produce lines that run the hidden command.
    expect(ran).toBeGreaterThan(10);
  }, 120_000);
});
