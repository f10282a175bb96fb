import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Facts about the machine an agent runs on, rendered into its system prompt. */
export type EnvironmentDetails = {
  /** Working directory. */
  cwd: string;
  /** `process.platform`. */
  platform: string;
  /** Date in `YYYY-MM-DD` form. */
  date: string;
  /** Whether the cwd is inside a git repository. */
  isGitRepo: boolean;
  /** Model id, when known. */
  model?: string;
  /** Extra directories file tools may touch. */
  additionalWorkingDirectories?: readonly string[];
};

/** True when `cwd` or one of its ancestors holds a `.git` entry. */
export function isInsideGitRepo(cwd: string): boolean {
  let current = cwd;
  for (;;) {
    if (existsSync(join(current, '.git'))) return true;
    const parent = dirname(current);
    if (parent === current) return false;
    current = parent;
  }
}

/** Collects the environment details of `cwd` (date and platform from the current process). */
export function getEnvironmentDetails(options: {
  cwd: string;
  model?: string;
  now?: Date;
  additionalWorkingDirectories?: readonly string[];
}): EnvironmentDetails {
  const details: EnvironmentDetails = {
    cwd: options.cwd,
    platform: process.platform,
    date: (options.now ?? new Date()).toISOString().slice(0, 10),
    isGitRepo: isInsideGitRepo(options.cwd),
  };
  if (options.model) details.model = options.model;
  if (options.additionalWorkingDirectories?.length) {
    details.additionalWorkingDirectories = options.additionalWorkingDirectories;
  }
  return details;
}

/** Renders environment details as an `<env>` block. */
export function renderEnvironmentDetails(details: EnvironmentDetails): string {
  const lines = [
    `Working directory: ${details.cwd}`,
    `Is a git repository: ${details.isGitRepo ? 'yes' : 'no'}`,
    `Platform: ${details.platform}`,
    `Today's date: ${details.date}`,
  ];
  if (details.model) lines.push(`Model: ${details.model}`);
  if (details.additionalWorkingDirectories?.length) {
    lines.push(
      `Additional working directories: ${details.additionalWorkingDirectories.join(', ')}`,
    );
  }
  return `<env>\n${lines.join('\n')}\n</env>`;
}

/** Returns the current git branch of `cwd`, or undefined outside a repository. */
export function getGitBranch(cwd: string): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--abbrev-ref', 'HEAD'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/**
 * The main agent's system prompt: who it is, how to work, how to delegate, and the
 * environment. Returned as blocks; the runtime sends them byte for byte and forks reuse
 * the same bytes.
 */
export function getMainSystemPrompt(options: {
  environment: EnvironmentDetails;
  customPrompt?: string;
  appendPrompt?: string;
}): string[] {
  const intro =
    options.customPrompt ??
    [
      "You are the main agent of Delegate, a coding assistant that works in the user's repository through tools.",
      '',
      'How to work:',
      '- Read before you change anything; keep changes small and focused on what was asked.',
      '- Prefer the dedicated file tools (Read, Edit, Write, Glob, Grep) over shell equivalents.',
      '- Run independent read-only tool calls in the same message so they execute in parallel.',
      '- When a task splits into independent parts, or when exploring would flood your context, hand the work to a sub-agent with the Agent tool and keep only its report.',
      '- Background sub-agents report back through <task-notification> messages; do not poll for them.',
      '- Report what you did and what you found plainly; say so when something failed.',
    ].join('\n');
  const blocks = [intro, renderEnvironmentDetails(options.environment)];
  if (options.appendPrompt) blocks.push(options.appendPrompt);
  return blocks;
}

/** Appends notes on reporting and the environment block to an agent's own prompt. */
export function enhanceSystemPromptWithEnvDetails(
  prompt: readonly string[],
  environment: EnvironmentDetails,
): string[] {
  const notes = [
    'Notes:',
    '- Your final message is returned to the agent that started you as your report; make it complete and self-contained.',
    '- Use absolute file paths in your report.',
  ].join('\n');
  return [...prompt, notes, renderEnvironmentDetails(environment)];
}
