import { basename, dirname, isAbsolute, relative, sep } from 'node:path';
import { KNOWN_AGENT_KEYS } from './normalize-agent-fields.js';

/** Frontmatter keys of a Claude Code slash command (`.claude/commands/*.md`) that no agent has. */
export const SLASH_COMMAND_KEYS: readonly string[] = [
  'argument-hint',
  'allowed-tools',
  'disable-model-invocation',
];

/** Name of the folder slash commands live in (`.claude/commands`, a plugin's `commands/`). */
export const COMMANDS_FOLDER_NAME = 'commands';

// Keys a command shares with an agent: they say nothing about which of the two a file is.
const SHARED_KEYS = new Set(['description', 'model']);

/** A file's frontmatter and where it was found, for {@link looksLikeSlashCommand}. */
export type SlashCommandCandidate = {
  /** The frontmatter, as read. */
  record: Record<string, unknown>;
  /** The file. */
  filePath: string;
  /** The agents directory it was found in. */
  baseDir: string;
};

/** Why a file is taken for a slash command: a key only commands have, or its folder. */
export type SlashCommandSign = { key: string } | { folder: string };

// The folders from the agents directory (itself included) down to the file's own folder.
function foldersOf(candidate: SlashCommandCandidate): string[] {
  const path = relative(dirname(candidate.baseDir), dirname(candidate.filePath));
  if (path === '' || isAbsolute(path) || path === '..' || path.startsWith(`..${sep}`))
    return [basename(dirname(candidate.filePath))];
  return path.split(sep);
}

/**
 * Whether a file in an agents folder is a slash command rather than an agent, and why:
 * its frontmatter has no `name` (in any letter case) and no key only an agent has (`tools`,
 * `color`, `hooks`, …), and it has a key only commands have ({@link SLASH_COMMAND_KEYS}, such as
 * `argument-hint`) or sits in a folder named `commands` (a copied collection's commands, whose
 * frontmatter may hold only `description` and `category`). Claude Code skips such a file
 * silently, as it skips every file without `name`. Returns `undefined` for a file that looks like
 * an agent, whose missing `name` is an error.
 */
export function looksLikeSlashCommand(
  candidate: SlashCommandCandidate,
): SlashCommandSign | undefined {
  const keys = Object.keys(candidate.record);
  const lower = keys.map((key) => key.toLowerCase());
  const agentOnly = KNOWN_AGENT_KEYS.filter((known) => !SHARED_KEYS.has(known));
  if (agentOnly.some((known) => lower.includes(known.toLowerCase()))) return undefined;
  const key = keys.find((candidateKey) => SLASH_COMMAND_KEYS.includes(candidateKey.toLowerCase()));
  if (key !== undefined) return { key };
  const folder = foldersOf(candidate).find((name) => name.toLowerCase() === COMMANDS_FOLDER_NAME);
  return folder === undefined ? undefined : { folder };
}
