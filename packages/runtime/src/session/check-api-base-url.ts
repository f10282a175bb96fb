import { DelegateError } from '@delegate/core';

// Schemes named in the error: anything else before a colon may be part of a credential
// (`user:token@gateway` without a scheme parses with `user:` as its protocol).
const KNOWN_SCHEMES: ReadonlySet<string> = new Set(['ftp:', 'file:', 'ws:', 'wss:', 'data:']);

/**
 * Throws a DelegateError (INVALID_ARGUMENT) unless `value` is an absolute `http:` or `https:`
 * URL without a user name or password (fetch refuses those), naming `name`
 * (`ANTHROPIC_BASE_URL`, `options.baseURL`) so a bad base URL is refused when the client is
 * made rather than at the first request. The message never repeats the
 * value: a base URL may carry credentials (`https://user:token@gateway`).
 */
export function checkApiBaseUrl(value: string, name: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${name} is not a valid URL. Set it to the API's http:// or https:// address (such as https://api.anthropic.com, or the simulator's http://127.0.0.1:<port>), or leave it unset for the default.`,
      { details: { option: name } },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${name} must be an http:// or https:// URL${KNOWN_SCHEMES.has(url.protocol) ? `, not ${url.protocol}//` : ''}. Set it to the API's address (such as https://api.anthropic.com), or leave it unset for the default.`,
      { details: { option: name } },
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${name} holds a user name or password (user:secret@host), and Node's fetch refuses to send a request to such a URL, so every request would fail. Give the URL without them, and the credential as the API key (ANTHROPIC_API_KEY) or the header your gateway takes.`,
      { details: { option: name } },
    );
  }
}
