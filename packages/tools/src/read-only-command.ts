const readOnlyPrograms = new Set([
  'cat',
  'cut',
  'df',
  'du',
  'echo',
  'grep',
  'head',
  'ls',
  'pwd',
  'stat',
  'tail',
  'uname',
  'wc',
  'which',
  'whoami',
]);

const readOnlyGitCommands = new Set([
  'status',
  'log',
  'diff',
  'show',
  'blame',
  'rev-parse',
  'ls-files',
]);

// Redirection, substitution, background jobs, globbing into commands and variable
// expansion can all turn a harmless command into a writing one.
const unsafeCharacters = /[<>`$&;(){}\n\\]|\|\||\|&/;

/**
 * True when a Bash command line only reads: a pipeline (`|`) of allow-listed programs
 * (ls, cat, grep, head, wc, `git status`, `git diff`, …) with no redirection,
 * substitution, chaining or background jobs. Anything else counts as writing.
 */
export function isReadOnlyCommand(command: string): boolean {
  const trimmed = command.trim();
  if (trimmed === '' || unsafeCharacters.test(trimmed)) return false;
  return trimmed.split('|').every((segment) => {
    const words = segment.trim().split(/\s+/);
    const program = words[0] ?? '';
    if (program === 'git') {
      const subcommand = words[1] ?? '';
      return (
        readOnlyGitCommands.has(subcommand) && !words.some((word) => word.startsWith('--output'))
      );
    }
    if (program === 'find') {
      return !words.some((word) =>
        /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/.test(word),
      );
    }
    return readOnlyPrograms.has(program);
  });
}
