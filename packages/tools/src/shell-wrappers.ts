import type { ShellWord } from './shell-word.js';

/** What a command runs besides itself, as far as the line shows. */
export type WrappedRun =
  /** Another command, given as words (program first): `sudo rm x` runs `rm x`. */
  | { kind: 'command'; words: ShellWord[] }
  /** Shell code in a string: `bash -c 'rm x'`, `eval`, `trap`, `watch`, `su -c`, `alias`. */
  | { kind: 'code'; source: string }
  /** Shell code read from standard input (`bash` with no script: `… | bash`, `bash <<EOF`). */
  | { kind: 'stdin' }
  /** Something it runs that the line does not show. */
  | { kind: 'opaque'; reason: string };

type OptionSpec = {
  /** Short options that take a value (`-u root`, `-uroot`). */
  shortValue?: string;
  /** Short options without a value. */
  shortFlags?: string;
  /** Short options whose value can only be attached (`-e[eof]`). */
  shortOptionalValue?: string;
  /** Long options that take a value (`--user root`, `--user=root`). */
  longValue?: readonly string[];
  /** Long options without a value (also accepted as `--name=value`). */
  longFlags?: readonly string[];
  /** Words to skip after the options, before the command (`timeout 5 cmd`). */
  positionals?: number;
  /** Skip `NAME=value` words before the command (`env A=1 cmd`, `sudo A=1 cmd`). */
  assignments?: boolean;
  /** Accept `-10` (nice). */
  numericShort?: boolean;
};

type Skipped = { index: number } | { opaque: string };

function unknownWord(word: ShellWord): string {
  return `${word.text} is only known when the line runs`;
}

/** Skips a wrapper's options; returns where its command starts or why it cannot be seen. */
function skipOptions(program: string, words: readonly ShellWord[], spec: OptionSpec): Skipped {
  let index = 0;
  while (index < words.length) {
    const word = words[index] as ShellWord;
    if (word.value === undefined || word.mayExpand) {
      return { opaque: `the arguments of ${program}: ${unknownWord(word)}` };
    }
    const value = word.value;
    if (value === '--') {
      index++;
      break;
    }
    if (spec.assignments === true && /^[A-Za-z_][A-Za-z0-9_]*=/.test(value)) {
      index++;
      continue;
    }
    if (value.startsWith('--')) {
      const [name = ''] = value.slice(2).split('=');
      if (spec.longValue?.includes(name)) {
        index += value.includes('=') ? 1 : 2;
        continue;
      }
      if (spec.longFlags?.includes(name)) {
        index++;
        continue;
      }
      return { opaque: `${program} has an option this analysis does not know: ${value}` };
    }
    if (value.startsWith('-') && value.length > 1) {
      if (spec.numericShort === true && /^-\d+$/.test(value)) {
        index++;
        continue;
      }
      let consumed = 1;
      for (let position = 1; position < value.length; position++) {
        const letter = value[position] ?? '';
        if (spec.shortValue?.includes(letter)) {
          if (position === value.length - 1) consumed = 2;
          break;
        }
        if (spec.shortOptionalValue?.includes(letter)) break;
        if (spec.shortFlags?.includes(letter)) continue;
        return { opaque: `${program} has an option this analysis does not know: ${value}` };
      }
      index += consumed;
      continue;
    }
    break;
  }
  return { index: index + (spec.positionals ?? 0) };
}

function runAfterOptions(
  program: string,
  words: readonly ShellWord[],
  spec: OptionSpec,
): WrappedRun[] {
  const skipped = skipOptions(program, words, spec);
  if ('opaque' in skipped) return [{ kind: 'opaque', reason: skipped.opaque }];
  const rest = words.slice(skipped.index);
  return rest.length === 0 ? [] : [{ kind: 'command', words: rest }];
}

const unknownInput: ShellWord = { text: '<input>', mayExpand: true };

const specs: Record<string, OptionSpec> = {
  nohup: {},
  builtin: {},
  coproc: {},
  busybox: {},
  unbuffer: {},
  exec: { shortFlags: 'cl', shortValue: 'a' },
  doas: { shortFlags: 'nsL', shortValue: 'uC' },
  nice: { shortValue: 'n', longValue: ['adjustment'], numericShort: true },
  ionice: { shortFlags: 't', shortValue: 'cnpPu', longValue: ['class', 'classdata'] },
  stdbuf: { shortValue: 'ioe', longValue: ['input', 'output', 'error'] },
  setsid: { shortFlags: 'cfw', longFlags: ['ctty', 'fork', 'wait'] },
  chroot: { longValue: ['userspec', 'groups'], longFlags: ['skip-chdir'], positionals: 1 },
  taskset: { shortFlags: 'ac', longFlags: ['all-tasks', 'cpu-list'], positionals: 1 },
  timeout: {
    shortFlags: 'v',
    shortValue: 'ks',
    longValue: ['kill-after', 'signal'],
    longFlags: ['preserve-status', 'foreground', 'verbose'],
    positionals: 1,
  },
  time: {
    shortFlags: 'pvaq',
    shortValue: 'fo',
    longValue: ['format', 'output'],
    longFlags: ['append', 'verbose', 'quiet', 'portability'],
  },
  sudo: {
    shortFlags: 'AbBEeHiKklnNPSsVv',
    shortValue: 'CDghpRrTtUu',
    longValue: [
      'chdir',
      'chroot',
      'close-from',
      'command-timeout',
      'group',
      'host',
      'other-user',
      'prompt',
      'role',
      'type',
      'user',
    ],
    longFlags: [
      'askpass',
      'background',
      'bell',
      'edit',
      'login',
      'list',
      'non-interactive',
      'preserve-env',
      'preserve-groups',
      'remove-timestamp',
      'reset-timestamp',
      'shell',
      'stdin',
      'validate',
    ],
    assignments: true,
  },
  env: {
    shortFlags: '0iv',
    shortValue: 'uC',
    longValue: ['unset', 'chdir'],
    longFlags: [
      'ignore-environment',
      'null',
      'debug',
      'default-signal',
      'ignore-signal',
      'block-signal',
      'list-signal-handling',
    ],
    assignments: true,
  },
  xargs: {
    shortFlags: '0prtxo',
    shortValue: 'aEdILnPs',
    shortOptionalValue: 'eil',
    longValue: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'],
    longFlags: [
      'null',
      'no-run-if-empty',
      'verbose',
      'interactive',
      'exit',
      'open-tty',
      'show-limits',
      'eof',
      'replace',
      'max-lines',
    ],
  },
};

/**
 * Launchers that run the command their arguments name, after this many fixed words
 * (`setarch ARCH cmd`, `chrt PRIORITY cmd`): util-linux (on every Linux), tracers and
 * similar. Their options are many and some take values, so a call with any option is
 * opaque rather than guessed at; without options the rest of the line is the command.
 */
const launchers: Readonly<Record<string, number>> = {
  unshare: 0,
  nsenter: 0,
  setpriv: 0,
  prlimit: 0,
  linux32: 0,
  linux64: 0,
  i386: 0,
  x86_64: 0,
  setarch: 1,
  chrt: 1,
  runcon: 1,
  numactl: 0,
  strace: 0,
  ltrace: 0,
  valgrind: 0,
  catchsegv: 0,
  pkexec: 0,
  'systemd-run': 0,
  caffeinate: 0,
  fakeroot: 0,
  firejail: 0,
  bwrap: 0,
  torsocks: 0,
  proxychains: 0,
  proxychains4: 0,
  'dbus-run-session': 0,
  'xvfb-run': 0,
  entr: 0,
};

/** Programs that run commands from their arguments in a syntax of their own. */
const opaqueLaunchers = new Set(['gdb', 'parallel', 'sg', 'nix-shell', 'perf']);

function launcherRuns(program: string, words: readonly ShellWord[], fixed: number): WrappedRun[] {
  let index = 0;
  for (; index < words.length; index++) {
    const word = words[index] as ShellWord;
    if (word.value === undefined || word.mayExpand)
      return [{ kind: 'opaque', reason: `the arguments of ${program}: ${unknownWord(word)}` }];
    if (word.value === '--') {
      index++;
      break;
    }
    if (word.value.startsWith('-') && word.value.length > 1)
      return [
        {
          kind: 'opaque',
          reason: `${program} ${word.value}: the options of ${program} are not taken apart, so the command it runs is not known`,
        },
      ];
    if (index >= fixed) break;
  }
  const rest = words.slice(Math.max(index, fixed));
  return rest.length === 0 ? [] : [{ kind: 'command', words: rest }];
}

/** `env -S`/`--split-string` splits a string into a command line of its own. */
function envRuns(words: readonly ShellWord[]): WrappedRun[] {
  const splits = words.some((word) => {
    const value = word.value ?? '';
    return (
      value === '--split-string' || value.startsWith('--split-string=') || /^-[0iv]*S/.test(value)
    );
  });
  if (splits) return [{ kind: 'opaque', reason: 'env -S splits a string into a command' }];
  return runAfterOptions('env', words, specs['env'] as OptionSpec);
}

/** `command -v`/`-V` only looks a name up; otherwise the rest runs. */
function commandRuns(words: readonly ShellWord[]): WrappedRun[] {
  if (words.some((word) => /^-[pvV]*[vV]/.test(word.value ?? ''))) return [];
  return runAfterOptions('command', words, { shortFlags: 'p' });
}

/** xargs runs its command with words read from standard input appended. */
function xargsRuns(words: readonly ShellWord[]): WrappedRun[] {
  const skipped = skipOptions('xargs', words, specs['xargs'] as OptionSpec);
  if ('opaque' in skipped) return [{ kind: 'opaque', reason: skipped.opaque }];
  const replaced = words
    .slice(0, skipped.index)
    .some((word) => /^-[^-]*[Ii]|^--replace/.test(word.value ?? ''));
  const rest = words.slice(skipped.index);
  const command = rest.length === 0 ? [{ text: 'echo', value: 'echo', mayExpand: false }] : rest;
  // With -I/-i every argument may hold the replacement; without, input words are appended.
  const inner = replaced
    ? command.map((word, index) => (index === 0 ? word : { ...unknownInput, text: word.text }))
    : [...command, unknownInput];
  return [{ kind: 'command', words: inner }];
}

/** find runs the command of every -exec, -execdir, -ok and -okdir, up to `;` or `+`. */
function findRuns(words: readonly ShellWord[]): WrappedRun[] {
  const runs: WrappedRun[] = [];
  for (let index = 0; index < words.length; index++) {
    const value = words[index]?.value;
    if (value !== '-exec' && value !== '-execdir' && value !== '-ok' && value !== '-okdir')
      continue;
    const inner: ShellWord[] = [];
    for (index++; index < words.length; index++) {
      const word = words[index] as ShellWord;
      if (word.value === ';' || word.value === '+') break;
      inner.push(word.value === '{}' ? { ...unknownInput, text: '{}' } : word);
    }
    if (inner.length > 0) runs.push({ kind: 'command', words: inner });
  }
  return runs;
}

const shells = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'rbash', 'fish']);
const shellValueOptions = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']);

/** `bash -c CODE`, `bash script`, or `bash` reading its code from standard input. */
function shellRuns(program: string, words: readonly ShellWord[]): WrappedRun[] {
  let runsString = false;
  for (let index = 0; index < words.length; index++) {
    const word = words[index] as ShellWord;
    if (word.value === undefined || word.mayExpand) {
      return [{ kind: 'opaque', reason: `the arguments of ${program}: ${unknownWord(word)}` }];
    }
    const value = word.value;
    if (value === '--' || value === '-') continue;
    if (program === 'fish' && /^--(command|init-command)(=|$)/.test(value)) {
      if (value.includes('='))
        return [{ kind: 'code', source: value.slice(value.indexOf('=') + 1) }];
      runsString = true;
      continue;
    }
    if (shellValueOptions.has(value)) {
      index++;
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(value)) {
      if (
        value.startsWith('-') &&
        (value.includes('c') || (program === 'fish' && value.includes('C')))
      ) {
        runsString = true;
      }
      // `-o NAME` / `-O NAME` in a cluster (`-eo pipefail`) take the next word.
      if (/[oO]/.test(value)) index++;
      continue;
    }
    if (value.startsWith('--')) continue;
    // The first word that is not an option: the code string with -c, else a script file.
    return runsString ? [{ kind: 'code', source: value }] : [];
  }
  return runsString ? [] : [{ kind: 'stdin' }];
}

/** Commands whose option `-c`/`--command` takes shell code: `su -c`, `runuser -c`, `flock -c`, `script -c`. */
function commandOptionRuns(program: string, words: readonly ShellWord[]): WrappedRun[] {
  for (let index = 0; index < words.length; index++) {
    const value = words[index]?.value;
    let code: ShellWord | undefined;
    if (value === '-c' || value === '--command' || value === '--session-command')
      code = words[index + 1];
    else if (value?.startsWith('--command='))
      code = { text: value, value: value.slice(10), mayExpand: false };
    if (code === undefined) continue;
    if (code.value === undefined)
      return [
        {
          kind: 'opaque',
          reason: `the code given to ${program} -c is only known when the line runs`,
        },
      ];
    return [{ kind: 'code', source: code.value }];
  }
  if (program === 'flock')
    return runAfterOptions(program, words, {
      shortFlags: 'sxunoFv',
      shortValue: 'wE',
      positionals: 1,
    });
  return [];
}

/** `eval` joins its arguments and runs them as code. */
function evalRuns(words: readonly ShellWord[]): WrappedRun[] {
  const unknown = words.find((word) => word.value === undefined || word.mayExpand);
  if (unknown)
    return [
      {
        kind: 'opaque',
        reason: `eval runs ${unknown.text}, which is only known when the line runs`,
      },
    ];
  return words.length === 0
    ? []
    : [{ kind: 'code', source: words.map((word) => word.value).join(' ') }];
}

/** `trap CODE SIGNAL…` runs CODE later. */
function trapRuns(words: readonly ShellWord[]): WrappedRun[] {
  const rest = words[0]?.value === '--' ? words.slice(1) : words;
  const first = rest[0];
  if (first === undefined || first.value === '-p' || first.value === '-l' || first.value === '-')
    return [];
  if (first.value === undefined)
    return [
      { kind: 'opaque', reason: `trap runs ${first.text}, which is only known when the line runs` },
    ];
  return rest.length === 1 ? [] : [{ kind: 'code', source: first.value }];
}

/** `alias name=VALUE` makes VALUE run wherever the name is used. */
function aliasRuns(words: readonly ShellWord[]): WrappedRun[] {
  const runs: WrappedRun[] = [];
  for (const word of words) {
    if (word.value === undefined) {
      runs.push({
        kind: 'opaque',
        reason: `alias defines ${word.text}, which is only known when the line runs`,
      });
    } else if (word.value.includes('=')) {
      runs.push({ kind: 'code', source: word.value.slice(word.value.indexOf('=') + 1) });
    }
  }
  return runs;
}

/** `watch CMD…` runs its arguments, joined, with `sh -c` (or directly with -x). */
function watchRuns(words: readonly ShellWord[]): WrappedRun[] {
  const skipped = skipOptions('watch', words, {
    shortFlags: 'bcdegptwrx',
    shortValue: 'nq',
    longValue: ['interval', 'equexit'],
    longFlags: [
      'beep',
      'color',
      'no-color',
      'differences',
      'errexit',
      'chgexit',
      'precise',
      'no-title',
      'no-wrap',
      'no-rerun',
      'exec',
    ],
  });
  if ('opaque' in skipped) return [{ kind: 'opaque', reason: skipped.opaque }];
  const rest = words.slice(skipped.index);
  if (rest.length === 0) return [];
  const direct = words
    .slice(0, skipped.index)
    .some((word) => word.value === '--exec' || /^-[^-]*x/.test(word.value ?? ''));
  if (direct) return [{ kind: 'command', words: rest }];
  return evalRuns(rest);
}

/**
 * What a command runs besides itself, judged from its program's base name and its
 * arguments: wrappers (`env`, `sudo`, `doas`, `command`, `builtin`, `exec`, `nice`,
 * `ionice`, `timeout`, `time`, `nohup`, `stdbuf`, `setsid`, `chroot`, `taskset`,
 * `coproc`, `busybox`, `unbuffer`, `xargs`, `flock`, `find -exec`, `watch`; launchers such
 * as `unshare`, `nsenter`, `setarch`, `strace`, `pkexec` and `systemd-run`, opaque when given
 * an option; `gdb`, `parallel`, `sg`, `nix-shell` and `perf` with arguments are opaque), shells
 * (`sh`, `bash`, `zsh`, `dash`, `ksh`, `mksh`, `ash`, `rbash`, `fish`), and commands that
 * run code from a string (`eval`, `trap`, `alias`, `su -c`, `runuser -c`, `script -c`).
 */
export function wrappedRuns(program: string, args: readonly ShellWord[]): WrappedRun[] {
  if (shells.has(program)) return shellRuns(program, args);
  const fixed = launchers[program];
  if (fixed !== undefined) return launcherRuns(program, args, fixed);
  if (opaqueLaunchers.has(program) && args.length > 0)
    return [{ kind: 'opaque', reason: `${program} runs commands given in its arguments` }];
  switch (program) {
    case 'env':
      return envRuns(args);
    case 'command':
      return commandRuns(args);
    case 'xargs':
      return xargsRuns(args);
    case 'find':
      return findRuns(args);
    case 'eval':
      return evalRuns(args);
    case 'trap':
      return trapRuns(args);
    case 'alias':
      return aliasRuns(args);
    case 'watch':
      return watchRuns(args);
    case 'su':
    case 'runuser':
    case 'script':
    case 'flock':
      return commandOptionRuns(program, args);
    default: {
      const spec = specs[program];
      return spec === undefined ? [] : runAfterOptions(program, args, spec);
    }
  }
}
