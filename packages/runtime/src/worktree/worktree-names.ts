import { createHash } from 'node:crypto';

// Kept as they are; every other UTF-8 byte becomes %XX. `%` itself is encoded, so the
// encoding is injective, and `+` (never produced otherwise) marks a cut name.
const PLAIN_BYTE = /^[a-z0-9_-]$/;

/**
 * Turns any agent type or name into a piece of a path and a git branch name: bytes outside
 * `a-z 0-9 _ -` are written `%XX` (uppercase hex, `%` itself included), so two different
 * names never give the same piece, and nothing in it can climb out of a folder (`/`, `.`),
 * start a git option or break a ref (`~ ^ : ? * [ \ @ { .`). A result longer than
 * `maxLength` is cut (never inside a `%XX`) and ends in `+` and 16 hex digits of the
 * SHA-256 of the whole name. Local stand-in until `@delegate/memory` exports the same rule.
 */
export function toPathSafeName(name: string, maxLength = 48): string {
  let encoded = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const character = String.fromCharCode(byte);
    encoded += PLAIN_BYTE.test(character)
      ? character
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (encoded.length <= maxLength) return encoded;
  const hash = createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 16);
  let cut = Math.max(0, maxLength - hash.length - 1);
  // Never end inside a %XX escape.
  const escape = encoded.lastIndexOf('%', cut - 1);
  if (escape !== -1 && escape > cut - 3) cut = escape;
  return `${encoded.slice(0, cut)}+${hash}`;
}

/**
 * The worktree folder and branch suffix of an agent: `agent-<type>-<id>`, with the type
 * made path-safe by {@link toPathSafeName} and `attempt` added for a fresh worktree of a
 * continued agent. Always starts with `agent-`, so it can never be read as a git option.
 */
export function agentWorktreeSlug(options: {
  agentType: string;
  agentId: string;
  attempt?: string;
}): string {
  const id = options.agentId
    .replace(/^a/, '')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 12);
  const attempt = options.attempt ? `-${options.attempt.replace(/[^a-z0-9]/g, '')}` : '';
  return `agent-${toPathSafeName(options.agentType)}-${id}${attempt}`;
}
