import { DelegateError, type DelegateErrorCode } from '@delegate/core';

/** Error codes of HTTP answers that have no `DelegateErrorCode`. */
export type HttpErrorCode =
  'UNAUTHORIZED' | 'CONFLICT' | 'RATE_LIMITED' | 'PAYLOAD_TOO_LARGE' | 'UNAVAILABLE' | 'NOT_FOUND';

/** The `DelegateErrorCode` behind each HTTP-only code. */
const INTERNAL_CODE: Readonly<Record<HttpErrorCode, DelegateErrorCode>> = {
  UNAUTHORIZED: 'INVALID_ARGUMENT',
  CONFLICT: 'INVALID_ARGUMENT',
  RATE_LIMITED: 'LIMIT_EXCEEDED',
  PAYLOAD_TOO_LARGE: 'LIMIT_EXCEEDED',
  UNAVAILABLE: 'LIMIT_EXCEEDED',
  NOT_FOUND: 'NOT_FOUND',
};

/** A `DelegateError` that knows its HTTP status and the code the answer shows. */
export class ApiError extends DelegateError {
  /** HTTP status of the answer. */
  readonly status: number;
  /** Code in the answer's body. */
  readonly publicCode: string;
  /** Request field the error is about, when there is one. */
  readonly field: string | undefined;

  constructor(options: {
    status: number;
    code: HttpErrorCode | DelegateErrorCode;
    message: string;
    field?: string;
    cause?: unknown;
  }) {
    const internal: DelegateErrorCode =
      options.code in INTERNAL_CODE
        ? INTERNAL_CODE[options.code as HttpErrorCode]
        : (options.code as DelegateErrorCode);
    super(internal, options.message, {
      ...(options.cause === undefined ? {} : { cause: options.cause }),
      ...(options.field === undefined ? {} : { details: { field: options.field } }),
    });
    this.name = 'ApiError';
    this.status = options.status;
    this.publicCode = options.code;
    this.field = options.field;
  }
}

/** A 404 for a run that does not exist. */
export function runNotFound(runId: string): ApiError {
  return new ApiError({
    status: 404,
    code: 'NOT_FOUND',
    message: `No run with id ${runId}. List runs with GET /v1/runs.`,
  });
}

/** A 409 for an action the run's current state does not allow. */
export function conflict(message: string): ApiError {
  return new ApiError({ status: 409, code: 'CONFLICT', message });
}
