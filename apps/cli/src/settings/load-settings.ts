import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { z } from 'zod';
import { UsageError } from '../exit-codes.js';
import { CliSettings, type SettingOrigin } from './settings-schema.js';

/** One settings file that was found. */
export type SettingsFile = {
  /** Which layer it is. */
  origin: Extract<SettingOrigin, 'user' | 'project' | 'local'>;
  /** Its absolute path. */
  path: string;
  /** What it says. */
  settings: CliSettings;
};

/** Largest settings file read; a bigger one is refused rather than parsed. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

/** The nearest ancestor of `cwd` holding `.git`, else `cwd` itself. */
export function findProjectRoot(cwd: string): string {
  let current = resolve(cwd);
  for (;;) {
    if (existsSync(join(current, '.git'))) return current;
    const parent = dirname(current);
    if (parent === current) return resolve(cwd);
    current = parent;
  }
}

/** The three settings paths for a working directory, lowest precedence first. */
export function settingsPaths(options: { cwd: string; homeDir?: string }): Array<{
  origin: SettingsFile['origin'];
  path: string;
}> {
  const root = findProjectRoot(options.cwd);
  const home = options.homeDir ?? homedir();
  const user = { origin: 'user' as const, path: join(home, '.delegate', 'settings.json') };
  // Run from the home folder (or under a home that is a git repository, as a dotfiles one
  // is), the project's settings folder is the user's: it is read once, as the user's.
  if (samePath(root, home)) return [user];
  return [
    user,
    { origin: 'project', path: join(root, '.delegate', 'settings.json') },
    { origin: 'local', path: join(root, '.delegate', 'settings.local.json') },
  ];
}

function samePath(a: string, b: string): boolean {
  const real = (path: string): string => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  return real(a) === real(b);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? issue.path.join('.') : '(the whole file)';
  if (issue.code === 'unrecognized_keys') {
    return `unknown field ${issue.keys.map((key) => `"${[...issue.path, key].join('.')}"`).join(', ')} (see \`delegate config --help\` for the fields)`;
  }
  return `${field}: ${issue.message}`;
}

/**
 * Reads one settings file. A missing file is `undefined`; a file that is not valid JSON or
 * not valid settings throws a `UsageError` naming the path and the field.
 */
export function readSettingsFile(path: string): CliSettings | undefined {
  let text: string;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw new UsageError(`${path}: settings must be a regular file.`);
    if (stats.size > MAX_SETTINGS_BYTES) {
      throw new UsageError(`${path}: settings file is larger than 1 MiB; is it the right file?`);
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${path}: cannot read settings (${(error as Error).message}).`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new UsageError(
      `${path}: not valid JSON (${(error as Error).message}). Fix the file or remove it.`,
    );
  }
  const parsed = CliSettings.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(describeIssue).join('; ');
    throw new UsageError(`${path}: invalid settings: ${problems}.`);
  }
  return parsed.data;
}

/** Reads the user, project and local settings files that exist, lowest precedence first. */
export function loadSettingsFiles(options: { cwd: string; homeDir?: string }): SettingsFile[] {
  const files: SettingsFile[] = [];
  for (const { origin, path } of settingsPaths(options)) {
    const settings = readSettingsFile(path);
    if (settings) files.push({ origin, path, settings });
  }
  return files;
}
