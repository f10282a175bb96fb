import { ErrorView } from '../schemas.js';

function error(description: string) {
  return { description, content: { 'application/json': { schema: ErrorView } } };
}

/** Error answers every authenticated route can give. */
export const COMMON_ERRORS = {
  401: error('Missing, malformed or wrong bearer token.'),
  429: error('Too many requests for this token; see retry-after.'),
} as const;

/** A 400 naming the bad field. */
export const BAD_REQUEST = {
  400: error('A field is missing or invalid; `field` names it.'),
} as const;
/** A 404 for an unknown run or agent. */
export const NOT_FOUND = { 404: error('No such run (or agent).') } as const;
/** A 409 for an action the run's state does not allow. */
export const CONFLICT = {
  409: error('The run or agent is not in a state that allows this.'),
} as const;
/** A 413 for an oversized body. */
export const TOO_LARGE = {
  413: error('The request body is larger than the configured limit.'),
} as const;
/** A 415 for a body that is not JSON. */
export const NOT_JSON = {
  415: error('The body is not sent as application/json.'),
} as const;
/** A 503 while shutting down. */
export const UNAVAILABLE = { 503: error('The server is shutting down.') } as const;

/** A JSON success answer. */
export function json<T>(description: string, schema: T) {
  return { description, content: { 'application/json': { schema } } };
}
