import { type AgentDiagnostic } from './agent-diagnostic.js';
import { type SlashCommandSign } from './looks-like-slash-command.js';

/**
 * The note for a slash command found in an agents folder (see `looksLikeSlashCommand`): an
 * `info`, since Claude Code skips the file silently, saying why it was taken for a command and
 * what to do if it is an agent after all.
 */
export function explainSlashCommand(
  sign: SlashCommandSign,
): Pick<AgentDiagnostic, 'severity' | 'reason'> {
  const why =
    'key' in sign
      ? `its frontmatter has \`${sign.key}\` and no \`name\``
      : `it is in a folder named \`${sign.folder}\` and its frontmatter has no \`name\``;
  return {
    severity: 'info',
    reason: `looks like a slash command, not an agent (${why}); skipped, as Claude Code skips it — slash commands belong in .claude/commands; if this is an agent, add \`name:\``,
  };
}
