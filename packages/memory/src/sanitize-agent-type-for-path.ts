import { createHash } from 'node:crypto';
import { DelegateError } from '@delegate/core';
import { encodeWtf8 } from './wtf8.js';

/** The longest folder name `sanitizeAgentTypeForPath` returns. */
export const MAX_AGENT_FOLDER_NAME_LENGTH = 100;

/**
 * Separates a cut-down name from its hash; never produced by the encoding itself, and
 * valid in file names and git branch names (which refuse `~`).
 */
export const TRUNCATION_MARKER = '+';

const HASH_LENGTH = 16;

/** Names Windows reserves for devices, checked on plain (already lowercase, dot-free) names. */
const WINDOWS_DEVICE_NAME = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/;

/** True for the bytes kept as-is: lowercase ASCII letters, digits, `_` and `-`. */
export function isLiteralByte(byte: number): boolean {
  return (
    (byte >= 0x61 && byte <= 0x7a) ||
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x5f ||
    byte === 0x2d
  );
}

function escapeByte(byte: number): string {
  return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * Turns an agent type into one safe folder name (a single path segment).
 *
 * - A plain name (only `a-z`, `0-9`, `_`, `-`, not a Windows device name, not starting
 *   with `-`) is kept as-is: `code-reviewer` → `code-reviewer`.
 * - Any other name has every byte outside that set written as `%XX` (uppercase hex of its
 *   UTF-8 byte). Uppercase letters are encoded too, so `Foo` → `%46oo` and `foo` → `foo`
 *   stay apart on case-insensitive file systems. `%` itself is encoded (`%25`).
 *   A plain name that is a Windows device name has its first letter encoded (`con` → `%63on`).
 * - A result longer than {@link MAX_AGENT_FOLDER_NAME_LENGTH} is cut and gets `+` plus a
 *   16-hex-digit SHA-256 of the full agent type, so long names sharing a prefix stay apart.
 *
 * Different agent types always give different folder names (up to a 64-bit hash collision
 * for cut names); `decodeAgentTypeFromPath` reverses every name that was not cut. The
 * result is one path segment that is never `.` or `..`, holds no separator, never starts
 * with `-`, and is also a valid git branch name component, so it can name transcript
 * folders and worktree branches too.
 * Throws a DelegateError (INVALID_ARGUMENT) for an empty or non-string agent type.
 */
export function sanitizeAgentTypeForPath(agentType: string): string {
  if (typeof agentType !== 'string' || agentType.length === 0) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      'Agent memory needs a non-empty agent type to name its folder; got ' +
        (typeof agentType === 'string' ? 'an empty string' : typeof agentType) +
        '. Pass the agent type (for example "code-reviewer").',
      { details: { agentType } },
    );
  }
  const bytes = encodeWtf8(agentType);
  let encoded: string;
  if (bytes.every(isLiteralByte)) {
    encoded = WINDOWS_DEVICE_NAME.test(agentType)
      ? escapeByte(bytes[0] ?? 0) + agentType.slice(1)
      : agentType;
  } else {
    encoded = bytes
      .map((byte) => (isLiteralByte(byte) ? String.fromCharCode(byte) : escapeByte(byte)))
      .join('');
  }
  // A leading `-` would read as an option to git and other commands.
  if (encoded.startsWith('-')) encoded = escapeByte(0x2d) + encoded.slice(1);
  if (encoded.length <= MAX_AGENT_FOLDER_NAME_LENGTH) return encoded;

  let cut = MAX_AGENT_FOLDER_NAME_LENGTH - TRUNCATION_MARKER.length - HASH_LENGTH;
  // Never split a `%XX` escape: back up to the `%` if it would be cut through.
  const lastPercent = encoded.lastIndexOf('%', cut - 1);
  if (lastPercent !== -1 && lastPercent + 3 > cut) cut = lastPercent;
  const hash = createHash('sha256').update(Buffer.from(bytes)).digest('hex').slice(0, HASH_LENGTH);
  return encoded.slice(0, cut) + TRUNCATION_MARKER + hash;
}
