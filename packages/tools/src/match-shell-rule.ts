import { basename } from 'node:path';
import {
  analyzeShellCommandSync,
  type ShellAnalysis,
  type ShellCommand,
} from './analyze-shell-command.js';
import type { ShellWord } from './shell-word.js';

/** A Bash rule's content, parsed: `rm:*` (prefix), `git commit -m foo` (exact), `git * main` (pattern). */
export type ShellRule =
  { kind: 'prefix' | 'exact'; words: string[] } | { kind: 'pattern'; pattern: RegExp };

const ruleCache = new Map<string, ShellRule>();
const maxCachedRules = 1000;

function ruleWords(text: string): string[] {
  const analysis = analyzeShellCommandSync(text);
  const [command] = analysis.commands;
  const simple =
    command !== undefined &&
    !analysis.opaque &&
    analysis.commands.every((each) => each.origin !== 'line' || each === command) &&
    command.args.every((word) => word.value !== undefined && !word.mayExpand);
  if (!simple) return text.trim().split(/\s+/);
  return [command.program, ...command.args.map((word) => word.value ?? '')];
}

/**
 * Parses the content of a Bash rule (what is inside `Bash(…)`), as Claude Code writes
 * them: `prefix:*` or `prefix *` matches the prefix alone or followed by any arguments;
 * text with `*` elsewhere is a pattern in which `*` matches any characters; anything else
 * matches exactly. Words are compared after quote removal, so `git commit -m "a b"` and
 * `git commit -m 'a b'` are the same rule. The parser must be loaded.
 */
export function parseShellRuleContent(content: string): ShellRule {
  const cached = ruleCache.get(content);
  if (cached !== undefined) return cached;
  const trimmed = content.trim();
  let rule: ShellRule;
  const prefix = trimmed.endsWith(':*')
    ? trimmed.slice(0, -2)
    : trimmed.endsWith(' *')
      ? trimmed.slice(0, -2)
      : undefined;
  if (prefix !== undefined && !prefix.includes('*')) {
    rule = { kind: 'prefix', words: ruleWords(prefix) };
  } else if (trimmed.includes('*')) {
    const source = trimmed
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    rule = { kind: 'pattern', pattern: new RegExp(`^${source}$`, 's') };
  } else {
    rule = { kind: 'exact', words: ruleWords(trimmed) };
  }
  if (ruleCache.size >= maxCachedRules) ruleCache.clear();
  ruleCache.set(content, rule);
  return rule;
}

function isKnown(word: ShellWord): boolean {
  return word.value !== undefined && !word.mayExpand;
}

function wordsOf(command: ShellCommand): ShellWord[] {
  return [{ text: command.program, value: command.program, mayExpand: false }, ...command.args];
}

/** Could this command be the one a deny rule names? Unknown words count as matching. */
function denyMatches(command: ShellCommand, rule: ShellRule): boolean {
  const words = wordsOf(command);
  if (rule.kind === 'pattern') {
    if (!words.every(isKnown)) return true;
    const values = words.map((word) => word.value ?? '');
    const withBaseName = [basename(command.program), ...values.slice(1)];
    return rule.pattern.test(values.join(' ')) || rule.pattern.test(withBaseName.join(' '));
  }
  for (let index = 0; index < rule.words.length; index++) {
    const word = words[index];
    const expected = rule.words[index] ?? '';
    if (word === undefined) return false;
    // From here on the command is only known when it runs: it could be what the rule names.
    if (!isKnown(word)) return true;
    const value = word.value ?? '';
    const same =
      index === 0
        ? value === expected ||
          basename(value) === expected ||
          basename(value) === basename(expected)
        : value === expected;
    if (!same) return false;
  }
  if (rule.kind === 'prefix') return true;
  return words.length === rule.words.length;
}

/** Is this command exactly what an allow rule names? Unknown words never match. */
function allowMatches(command: ShellCommand, rule: ShellRule): boolean {
  if (command.assignments.length > 0) return false;
  const words = wordsOf(command);
  if (rule.kind === 'pattern') {
    return words.every(isKnown) && rule.pattern.test(words.map((word) => word.value).join(' '));
  }
  if (words.length < rule.words.length) return false;
  if (rule.kind === 'exact' && words.length !== rule.words.length) return false;
  return rule.words.every((expected, index) => {
    const word = words[index];
    return word !== undefined && isKnown(word) && word.value === expected;
  });
}

/**
 * True when one command (from `analyzeShellCommand`) matches a Bash rule's content. For
 * `deny`, a command matches when it could be the one the rule names: its program is
 * compared by base name too (`/bin/rm` is `rm`), and a word only known at run time
 * (`$X`, a glob, input appended by xargs) matches whatever the rule says from there on.
 * For `allow`, every compared word must be known and equal (program as written), and a
 * command with variable assignments before it (`PATH=… git status`) never matches.
 */
export function shellCommandMatchesRule(options: {
  command: ShellCommand;
  ruleContent: string;
  behavior: 'allow' | 'deny';
}): boolean {
  const rule = parseShellRuleContent(options.ruleContent);
  return options.behavior === 'deny'
    ? denyMatches(options.command, rule)
    : allowMatches(options.command, rule);
}

/**
 * True when a deny rule's content matches a line: when any command the line would run
 * matches (wrapped ones and those in `bash -c` strings included), or when the analysis
 * could not see through part of the line.
 */
export function deniedByShellRule(options: {
  analysis: ShellAnalysis;
  ruleContent: string;
}): boolean {
  const { analysis, ruleContent } = options;
  if (analysis.opaque) return true;
  return analysis.commands.some((command) =>
    shellCommandMatchesRule({ command, ruleContent, behavior: 'deny' }),
  );
}

/**
 * True when allow rules cover a whole line: the line is fully seen through, writes no file
 * by redirection, and every command of the line itself (each part of a chain or pipeline,
 * each `$(…)`) matches one of the rules' contents.
 */
export function allowedByShellRules(options: {
  analysis: ShellAnalysis;
  ruleContents: readonly string[];
}): boolean {
  const { analysis, ruleContents } = options;
  if (analysis.opaque || analysis.writtenFiles.length > 0) return false;
  const commands = analysis.commands.filter((command) => command.origin === 'line');
  return (
    commands.length > 0 &&
    commands.every((command) =>
      ruleContents.some((ruleContent) =>
        shellCommandMatchesRule({ command, ruleContent, behavior: 'allow' }),
      ),
    )
  );
}
