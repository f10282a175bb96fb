/** The text that replaces a secret in what tools return. */
export const REDACTED = '[REDACTED]';

/** Shorter values are not treated as secrets (a placeholder key like `sim` is none). */
export const MIN_SECRET_LENGTH = 8;

/**
 * Returns a function that replaces every occurrence of each secret in a text by
 * `[REDACTED]`, longest secrets first; `undefined` when there is no secret to look for.
 */
export function secretRedactor(
  secrets: readonly (string | null | undefined)[],
): ((text: string) => string) | undefined {
  const list = [...new Set(secrets)]
    .filter(
      (secret): secret is string =>
        typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH,
    )
    .sort((a, b) => b.length - a.length);
  if (list.length === 0) return undefined;
  return (text) => {
    let result = text;
    for (const secret of list)
      if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    return result;
  };
}

/** The redactor of a session's tool results: its client's credentials and its `secrets`. */
export function sessionRedactor(runtime: {
  client: { apiKey?: string | null; authToken?: string | null };
  options: { secrets: readonly string[] };
}): ((text: string) => string) | undefined {
  return secretRedactor([
    runtime.client.apiKey,
    runtime.client.authToken,
    ...runtime.options.secrets,
  ]);
}
