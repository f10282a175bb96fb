/** The text that replaces a secret. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are not redacted (a placeholder key like `sim` is no secret). */
export const MIN_SECRET_LENGTH = 8;

/** The secrets long enough to be redacted (the others would match ordinary text). */
export function redactableSecrets(secrets: readonly (string | undefined)[]): string[] {
  return secrets.filter(
    (secret): secret is string => secret !== undefined && secret.length >= MIN_SECRET_LENGTH,
  );
}

/**
 * Returns a function that copies a JSON-like value with every occurrence of each secret
 * (the API key, the server token) in its strings, keys included, replaced by `[REDACTED]`.
 */
export function createRedactor(secrets: readonly (string | undefined)[]): <T>(value: T) => T {
  const list = [...new Set(redactableSecrets(secrets))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (value) => value;
  const redactText = (text: string): string => {
    let result = text;
    for (const secret of list)
      if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    return result;
  };
  const visit = (value: unknown): unknown => {
    if (typeof value === 'string') return redactText(value);
    if (Array.isArray(value)) return value.map(visit);
    if (value !== null && typeof value === 'object') {
      const copy: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) copy[redactText(key)] = visit(inner);
      return copy;
    }
    return value;
  };
  return <T>(value: T): T => visit(value) as T;
}
