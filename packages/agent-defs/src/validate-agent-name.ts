import { UNSAFE_OBJECT_KEYS } from './drop-unsafe-keys.js';

/** Longest agent name accepted, in UTF-16 code units, as in Claude Code. */
export const MAX_AGENT_NAME_LENGTH = 256;

/** Names refused because code that keys plain objects by agent type would misread them. */
export const RESERVED_AGENT_NAMES: ReadonlySet<string> = UNSAFE_OBJECT_KEYS;

// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

// Characters that print as nothing (zero-width spaces and joiners, direction marks and
// overrides, the byte-order mark, tag characters) and line or paragraph separators: a name
// holding one looks exactly like another name.
const INVISIBLE_CHARACTERS = /[\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Returns why `name` cannot be an agent type, or `undefined` when it can. Claude Code's rules
 * come first: a name is non-empty, at most {@link MAX_AGENT_NAME_LENGTH} long, does not start
 * with `-` and holds no `:`; spaces, `/`, `\` and `..` are accepted, so a name is not a safe
 * path segment (see {@link isPathSafeAgentName}). Delegate also refuses control and invisible
 * characters (they make a name look like another or garble a terminal) and the
 * {@link RESERVED_AGENT_NAMES}.
 */
export function validateAgentName(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > MAX_AGENT_NAME_LENGTH)
    return `is longer than ${MAX_AGENT_NAME_LENGTH} characters`;
  if (name.startsWith('-')) return "starts with '-'";
  if (name.includes(':')) return "contains ':'";
  if (CONTROL_CHARACTERS.test(name)) return 'contains a control character';
  if (INVISIBLE_CHARACTERS.test(name))
    return 'contains an invisible character (such as a zero-width space or a direction mark)';
  if (RESERVED_AGENT_NAMES.has(name)) return 'is reserved';
  return undefined;
}

/**
 * Whether an agent name can be used as one path segment as it is: no `/` or `\`, not `.` or
 * `..`, no leading or trailing space or dot, no `~` at the start. Agent types may hold all of
 * these (Claude Code accepts them), so code that puts a type into a path, a file name or a git
 * branch must encode it when this is false.
 */
export function isPathSafeAgentName(name: string): boolean {
  return (
    validateAgentName(name) === undefined &&
    !/[/\\]/.test(name) &&
    name !== '.' &&
    name !== '..' &&
    !/^[\s.~]|[\s.]$/.test(name)
  );
}
