/** Longest agent name accepted; longer names are almost certainly pasted text, not a name. */
export const MAX_AGENT_NAME_LENGTH = 200;

// eslint-disable-next-line no-control-regex -- the point is to find control characters
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Returns why `name` cannot be an agent type, or `undefined` when it can. Names end up in
 * paths (memory directories, transcripts), so anything that could leave a directory is refused.
 */
export function validateAgentName(name: string): string | undefined {
  if (name.length === 0) return 'is empty';
  if (name.length > MAX_AGENT_NAME_LENGTH)
    return `is longer than ${MAX_AGENT_NAME_LENGTH} characters`;
  if (CONTROL_CHARACTERS.test(name)) return 'contains a control character';
  if (name.includes('/') || name.includes('\\')) return 'contains a path separator (/ or \\)';
  if (name.includes('..')) return "contains '..'";
  if (name === '.') return "is '.'";
  return undefined;
}
