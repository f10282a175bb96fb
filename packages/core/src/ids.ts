import { randomBytes, randomUUID } from 'node:crypto';

/** Returns a new random v4 UUID for a message. */
export function createUuid(): string {
  return randomUUID();
}

/**
 * Returns a new agent id: `a` followed by 16 hex digits, or `a<label>-<hex>` when a
 * label is given (labels are reduced to `[a-z0-9-]` so an id is always safe in a path).
 */
export function createAgentId(label?: string): string {
  const hex = randomBytes(8).toString('hex');
  if (!label) return `a${hex}`;
  const safe = label
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return safe ? `a${safe}-${hex}` : `a${hex}`;
}

/** Returns a new task id: `t` followed by 12 hex digits. */
export function createTaskId(): string {
  return `t${randomBytes(6).toString('hex')}`;
}
