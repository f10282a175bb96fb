import { MIN_SECRET_LENGTH, REDACTED, secretRedactor } from '@delegate/runtime';

export { MIN_SECRET_LENGTH, REDACTED };

/** The secrets long enough to be redacted (the others would match ordinary text). */
export function redactableSecrets(secrets: readonly (string | undefined)[]): string[] {
  return secrets.filter(
    (secret): secret is string => secret !== undefined && secret.length >= MIN_SECRET_LENGTH,
  );
}

/**
 * Returns a function that copies a JSON-like value with every occurrence of each secret
 * (the API key, the server token) in its strings, keys included, replaced by `[REDACTED]`,
 * as the runtime redacts tool results (overlapping secrets and pieces next to a cut mark
 * included).
 */
export function createRedactor(secrets: readonly (string | undefined)[]): <T>(value: T) => T {
  const redact = secretRedactor(redactableSecrets(secrets));
  if (redact === undefined) return (value) => value;
  const visit = (value: unknown): unknown => {
    if (typeof value === 'string') return redact(value);
    if (Array.isArray(value)) return value.map(visit);
    if (value !== null && typeof value === 'object') {
      const copy: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) copy[redact(key)] = visit(inner);
      return copy;
    }
    return value;
  };
  return <T>(value: T): T => visit(value) as T;
}
