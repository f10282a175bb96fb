import { UNSAFE_OBJECT_KEYS } from './drop-unsafe-keys.js';

/** Longest agent name accepted; longer names are almost certainly pasted text, not a name. */
export const MAX_AGENT_NAME_LENGTH = 200;

/** Names refused because code that keys plain objects by agent type would misread them. */
export const RESERVED_AGENT_NAMES: ReadonlySet<string> = UNSAFE_OBJECT_KEYS;

// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

// Characters that print as nothing (zero-width spaces and joiners, direction marks and
// overrides, the byte-order mark, tag characters) and line or paragraph separators: a name
// holding one looks exactly like another name.
const INVISIBLE_CHARACTERS = /[\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Returns why `name` cannot be an agent type, or `undefined` when it can. Names end up in
 * paths (memory directories, transcripts), so anything that could leave a directory is refused;
 * so are invisible characters and the {@link RESERVED_AGENT_NAMES}. A `:` is allowed, so a
 * user, project, flag or policy file can override a plugin agent by its full `plugin:name`.
 */
export function validateAgentName(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > MAX_AGENT_NAME_LENGTH)
    return `is longer than ${MAX_AGENT_NAME_LENGTH} characters`;
  if (CONTROL_CHARACTERS.test(name)) return 'contains a control character';
  if (INVISIBLE_CHARACTERS.test(name))
    return 'contains an invisible character (such as a zero-width space or a direction mark)';
  if (name.includes('/') || name.includes('\\')) return 'contains a path separator (/ or \\)';
  if (name.includes('..')) return "contains '..'";
  if (name === '.') return "is '.'";
  if (RESERVED_AGENT_NAMES.has(name)) return 'is reserved';
  return undefined;
}
