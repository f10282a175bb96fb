import { beforeAll, describe, expect, it } from 'vitest';
import { analyzeShellCommandSync } from './analyze-shell-command.js';
import {
  allowedByShellRules,
  deniedByShellRule,
  parseShellRuleContent,
} from './match-shell-rule.js';
import { loadShellParser } from './shell-parser.js';

beforeAll(() => loadShellParser());

const denied = (line: string, rule: string): boolean =>
  deniedByShellRule({ analysis: analyzeShellCommandSync(line), ruleContent: rule });
const allowed = (line: string, rules: string[]): boolean =>
  allowedByShellRules({ analysis: analyzeShellCommandSync(line), ruleContents: rules });

describe('Bash rule contents', () => {
  it('parses prefix, exact and pattern rules, comparing words after quote removal', () => {
    expect(parseShellRuleContent('rm:*')).toEqual({ kind: 'prefix', words: ['rm'] });
    expect(parseShellRuleContent('npm run *')).toEqual({ kind: 'prefix', words: ['npm', 'run'] });
    expect(parseShellRuleContent('git commit -m "a b"')).toEqual({
      kind: 'exact',
      words: ['git', 'commit', '-m', 'a b'],
    });
    expect(parseShellRuleContent('git * main').kind).toBe('pattern');
  });

  it('denies the bypasses of issue 13 and their relatives', () => {
    for (const line of [
      'env rm -rf x',
      'FOO=1 rm -rf x',
      'sudo rm -rf x',
      'sudo -u root rm -rf x',
      "bash -c 'rm -rf x'",
      "sh -c 'cd /tmp && rm -rf x'",
      'echo $(rm -rf x)',
      'echo `rm -rf x`',
      'ls | xargs rm -rf',
      'command rm -rf x',
      'nice timeout 5 nohup time rm -rf x',
      '(rm -rf x)',
      '{ rm -rf x; }',
      'cat <(rm -rf x)',
      'find . -exec rm -rf {} +',
      '\\rm -rf x',
      '"rm" -rf x',
      '/usr/bin/rm -rf x',
      'rm $FLAGS x',
      'rm * x',
      'eval "$CMD"',
      '$CMD -rf x',
      'echo rm -rf x | sh',
    ]) {
      expect({ line, denied: denied(line, 'rm -rf:*') }).toEqual({ line, denied: true });
    }
  });

  it('denies a command run through the wrappers of util-linux, tracers and other launchers', () => {
    // Each of these runs the command its arguments name (util-linux is on every Linux).
    for (const line of [
      'unshare rm -rf x',
      'unshare -r rm -rf x',
      'nsenter -t 1 -m rm -rf x',
      'setpriv --reuid=1000 rm -rf x',
      'prlimit --nofile=10 rm -rf x',
      'chrt -b 0 rm -rf x',
      'setarch x86_64 rm -rf x',
      'linux64 rm -rf x',
      'strace -f -o log rm -rf x',
      'ltrace rm -rf x',
      'valgrind rm -rf x',
      'pkexec rm -rf x',
      'systemd-run --user rm -rf x',
      'runcon -t x rm -rf x',
      'caffeinate -i rm -rf x',
      'parallel rm -rf ::: x',
      'gdb -batch -ex run --args rm -rf x',
      'sg wheel -c "rm -rf x"',
    ]) {
      expect({ line, denied: denied(line, 'rm -rf:*') }).toEqual({ line, denied: true });
    }
  });

  it('does not deny what the rule does not name', () => {
    for (const line of ['rmdir x', 'rm x', 'echo rm -rf x', 'git rm -rf x', 'ls -rf']) {
      expect({ line, denied: denied(line, 'rm -rf:*') }).toEqual({ line, denied: false });
    }
    expect(denied('git push origin main', 'git push --force:*')).toBe(false);
    expect(denied('git push --force origin main', 'git push --force:*')).toBe(true);
    expect(denied('git push origin main', 'git push origin main')).toBe(true);
    expect(denied('git push origin main --force', 'git push origin main')).toBe(false);
    expect(denied('git push -f origin main', 'git push * main')).toBe(true);
  });

  it('allows only lines whose every command an allow rule names exactly', () => {
    expect(allowed('git status', ['git status:*'])).toBe(true);
    expect(allowed('git status --short', ['git status:*'])).toBe(true);
    expect(allowed('git add . && git commit -m "x"', ['git add:*', 'git commit:*'])).toBe(true);
    expect(allowed('git status; rm -rf x', ['git status:*'])).toBe(false);
    expect(allowed('git status > /etc/passwd', ['git status:*'])).toBe(false);
    expect(allowed('git status 2>/dev/null', ['git status:*'])).toBe(true);
    expect(allowed('git log $(rm x)', ['git log:*'])).toBe(false);
    expect(allowed('PATH=/tmp/evil git status', ['git status:*'])).toBe(false);
    expect(allowed('/tmp/evil/git status', ['git status:*'])).toBe(false);
    expect(allowed('sudo git status', ['git status:*'])).toBe(false);
    expect(allowed('$GIT status', ['git status:*'])).toBe(false);
    expect(allowed('git commit -m foo', ['git commit -m foo'])).toBe(true);
    expect(allowed("git commit -m 'foo'", ['git commit -m foo'])).toBe(true);
    expect(allowed('git commit -m foo --amend', ['git commit -m foo'])).toBe(false);
    expect(allowed('git commit -m $MESSAGE', ['git commit -m foo'])).toBe(false);
    expect(allowed('', ['git status:*'])).toBe(false);
  });
});
