/** A connection URL with its password replaced, fit for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/**
 * The password of a connection URL in every spelling it can take (so a log redactor and the
 * environment filter can remove it): as written in the URL, percent-encoded (`p%40ss`), and
 * decoded (`p@ss`); none when the URL has no password.
 */
export function urlPasswords(url: string | undefined): string[] {
  if (url === undefined) return [];
  let encoded: string;
  try {
    encoded = new URL(url).password;
  } catch {
    return [];
  }
  if (encoded === '') return [];
  let decoded = encoded;
  try {
    decoded = decodeURIComponent(encoded);
  } catch {
    // A malformed escape: the encoded spelling is the only one.
  }
  return [...new Set([encoded, decoded])];
}
