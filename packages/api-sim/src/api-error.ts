/** The error types the Messages API puts in `error.type`. */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/**
 * An error the simulator answers with, in the real API's shape
 * (`{"type":"error","error":{"type","message"},"request_id"}`).
 */
export class SimApiError extends Error {
  /** HTTP status of the response. */
  readonly status: number;
  /** The API error type (`invalid_request_error`, `rate_limit_error`…). */
  readonly type: ApiErrorType;
  /** Extra response headers (`retry-after`, `x-should-retry`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    type: ApiErrorType,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'SimApiError';
    this.status = status;
    this.type = type;
    this.headers = headers;
  }
}

/** Shorthand for a 400 `invalid_request_error`. */
export function invalidRequest(message: string): SimApiError {
  return new SimApiError(400, 'invalid_request_error', message);
}

/** Builds the JSON body of an error response. */
export function errorBody(type: ApiErrorType, message: string, requestId: string): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
}
