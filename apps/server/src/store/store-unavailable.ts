/** Error codes of Node's sockets that mean the store could not be reached or went away. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** What node-postgres throws when a connection ends or cannot be made in time. */
const CONNECTION_MESSAGE =
  /connection terminated|timeout exceeded when trying to connect|connection (?:is )?closed|client has encountered a connection error|cannot use a pool after calling end/i;

/**
 * True when `error` says the store is out of reach for now (PostgreSQL down or restarting, a
 * dropped connection), so the same write may succeed later; false for an error the write
 * itself caused (a constraint, bad data), which trying again cannot fix.
 */
export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code)) return true;
    // SQLSTATE class 08 (connection exception), 57P01-57P03 (shutting down, cannot connect
    // now) and 53300 (too many connections).
    if (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[123]$/.test(code) || code === '53300') return true;
  }
  if (typeof message === 'string' && CONNECTION_MESSAGE.test(message)) return true;
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== error) return isStoreUnavailable(cause, depth + 1);
  // AggregateError (a connection tried on several addresses).
  const errors = (error as { errors?: unknown }).errors;
  return Array.isArray(errors) && errors.some((inner) => isStoreUnavailable(inner, depth + 1));
}
