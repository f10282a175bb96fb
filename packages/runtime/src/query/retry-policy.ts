import { DelegateError, errorMessage, isAbortError } from '@delegate/core';

/** What a failed Messages API call says about itself, whatever shape the error had. */
export type NormalizedApiError = {
  /** HTTP status, when the failure was an HTTP answer (or an error event of a known type). */
  status: number | undefined;
  /** The server's `retry-after-ms` or `retry-after` hint in milliseconds, when it sent one. */
  retryAfterMs: number | undefined;
  /** True when no answer arrived: a refused, reset or cut connection, or a timeout. */
  isNetworkError: boolean;
  /** True when the response stream ended before `message_stop`. */
  streamEndedEarly: boolean;
  /** True for an abort (the caller's signal), which is never retried. */
  isAbort: boolean;
  /** The server's `x-should-retry` answer, when it sent one: it decides over the status. */
  shouldRetry: boolean | undefined;
  /**
   * The error's message; for an API error answer, its status, type, message and request id
   * (`529 overloaded_error: Overloaded (request req_…)`) rather than the SDK's JSON dump.
   */
  message: string;
};

/** Longest `retry-after` the loop honours; a longer hint is treated as this. */
export const MAX_RETRY_AFTER_MS = 60_000;

// Error events inside a 200 stream carry a type instead of a status.
const STATUS_OF_ERROR_TYPE: Readonly<Record<string, number>> = {
  overloaded_error: 529,
  api_error: 500,
  rate_limit_error: 429,
  timeout_error: 504,
};

const NETWORK_MESSAGE = /terminated|socket|econnreset|econnrefused|epipe|network|fetch failed/i;

function readHeader(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  const getter = (headers as { get?: unknown }).get;
  if (typeof getter === 'function') {
    const value: unknown = getter.call(headers, name);
    return typeof value === 'string' ? value : undefined;
  }
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Parses the retry hint of a response's headers: `retry-after-ms` (milliseconds), else
 * `retry-after` (seconds, or an HTTP date). Returns undefined when there is none or it
 * cannot be read; never more than {@link MAX_RETRY_AFTER_MS}.
 */
export function parseRetryAfter(headers: unknown, now = Date.now()): number | undefined {
  const clamp = (milliseconds: number): number =>
    Math.min(MAX_RETRY_AFTER_MS, Math.max(0, milliseconds));
  const rawMilliseconds = readHeader(headers, 'retry-after-ms')?.trim();
  if (rawMilliseconds && Number.isFinite(Number(rawMilliseconds)))
    return clamp(Number(rawMilliseconds));
  const raw = readHeader(headers, 'retry-after')?.trim();
  if (!raw) return undefined;
  if (Number.isFinite(Number(raw))) return clamp(Number(raw) * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : clamp(date - now);
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number') return status;
  const type = (error as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' ? STATUS_OF_ERROR_TYPE[type] : undefined;
}

/**
 * The message of an SDK `APIError` whose body has the API's error shape, as
 * `529 overloaded_error: Overloaded (request req_…)`. The SDK's own message is the status and
 * the whole body as JSON (`529 {"type":"error","error":{…},"request_id":…}`), and for an
 * `error` event inside a stream the JSON alone. Undefined for any other error.
 */
function apiErrorMessage(error: unknown, status: number | undefined): string | undefined {
  const body = (error as { error?: unknown } | undefined)?.error;
  if (!body || typeof body !== 'object') return undefined;
  const inner = (body as { error?: unknown }).error;
  if (!inner || typeof inner !== 'object') return undefined;
  const { type, message } = inner as { type?: unknown; message?: unknown };
  if (typeof message !== 'string' || message.length === 0) return undefined;
  const requestId =
    (error as { requestID?: unknown }).requestID ?? (body as { request_id?: unknown }).request_id;
  return [
    status === undefined ? '' : `${status} `,
    typeof type === 'string' && type.length > 0 ? `${type}: ` : '',
    message,
    typeof requestId === 'string' && requestId.length > 0 ? ` (request ${requestId})` : '',
  ].join('');
}

// Plain words for what the HTTP stack says tersely: undici's `terminated` (the connection
// closed mid-response) and a stream event that is not JSON (the SDK throws a SyntaxError).
function transportMessage(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === 'SyntaxError') {
    return `the response stream held an event that is not valid JSON (${error.message})`;
  }
  if (error.message !== 'terminated') return undefined;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `the connection closed in the middle of the response (terminated${cause})`;
}

/** Normalizes any error thrown by an SDK call or a stream into {@link NormalizedApiError}. */
export function normalizeApiError(error: unknown): NormalizedApiError {
  const name = (error as { name?: unknown } | undefined)?.name;
  const httpStatus = (error as { status?: unknown } | undefined)?.status;
  const message =
    apiErrorMessage(error, typeof httpStatus === 'number' ? httpStatus : undefined) ??
    transportMessage(error) ??
    errorMessage(error);
  const status = statusOf(error);
  const streamEndedEarly =
    (DelegateError.isInstance(error) && error.details?.['streamEndedEarly'] === true) ||
    name === 'SyntaxError';
  const isNetworkError =
    status === undefined &&
    (name === 'APIConnectionError' ||
      name === 'APIConnectionTimeoutError' ||
      NETWORK_MESSAGE.test(message));
  const headers = (error as { headers?: unknown } | undefined)?.headers;
  const shouldRetry = readHeader(headers, 'x-should-retry')?.trim().toLowerCase();
  return {
    status,
    retryAfterMs: parseRetryAfter(headers),
    shouldRetry: shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : undefined,
    isNetworkError,
    streamEndedEarly,
    isAbort: isAbortError(error),
    message,
  };
}

/** True when a stream that failed after it started is worth another attempt. */
export function isRetryableStreamError(error: NormalizedApiError): boolean {
  if (error.isAbort) return false;
  if (error.streamEndedEarly || error.isNetworkError) return true;
  const status = error.status;
  return status === 429 || status === 500 || status === 503 || status === 504 || status === 529;
}

/**
 * True when a request that failed before its stream began (an HTTP error answer, no
 * connection) is worth sending again: as the SDK decides (the server's `x-should-retry`
 * first, then 408, 409, 429, any 5xx and connection failures), never an abort.
 */
export function isRetryableRequestError(error: NormalizedApiError): boolean {
  if (error.isAbort) return false;
  if (error.shouldRetry !== undefined) return error.shouldRetry;
  if (error.isNetworkError) return true;
  const status = error.status;
  return status === 408 || status === 409 || status === 429 || (status ?? 0) >= 500;
}

/**
 * Wait before request retry `attempt` (0-based): the server's hint when it gave one (at most
 * {@link MAX_RETRY_AFTER_MS}), else 0.5 s doubling up to 8 s, less up to a quarter at random
 * so that many agents refused together do not come back together.
 */
export function requestRetryDelayMs(
  attempt: number,
  error: NormalizedApiError,
  random: () => number = Math.random,
): number {
  if (error.retryAfterMs !== undefined) return error.retryAfterMs;
  return Math.min(8_000, 500 * 2 ** attempt) * (1 - random() * 0.25);
}

/** Wait before retry `attempt` (0-based): the server's hint when it gave one, else 200 ms doubling up to 2 s. */
export function retryDelayMs(attempt: number, error: NormalizedApiError): number {
  return error.retryAfterMs ?? Math.min(2_000, 200 * 2 ** attempt);
}
