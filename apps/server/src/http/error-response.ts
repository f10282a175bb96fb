import { DelegateError, errorMessage } from '@delegate/core';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ZodError } from 'zod';
import { ApiError } from './api-error.js';

/** The body of every error answer. */
export type ErrorBody = {
  error: {
    code: string;
    message: string;
    field?: string;
    issues?: { path: string; message: string }[];
  };
};

const STATUS_OF_CODE: Readonly<Record<string, ContentfulStatusCode>> = {
  INVALID_ARGUMENT: 400,
  PATH_ESCAPE: 400,
  AGENT_NOT_FOUND: 400,
  MCP_SERVERS_MISSING: 400,
  NOT_FOUND: 404,
  LIMIT_EXCEEDED: 503,
};

/** Sends an error answer. */
export function sendError(
  c: Context,
  options: { status: ContentfulStatusCode; body: ErrorBody; headers?: Record<string, string> },
): Response {
  return c.json(options.body, options.status, options.headers);
}

/** Turns a failed zod validation of the body, path or query into a 400 that names the field. */
export function validationError(
  c: Context,
  options: { target: string; error: ZodError },
): Response {
  const unknown = options.target === 'query' ? 'parameter' : 'field';
  const issues = options.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown ${unknown}${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`
        : issue.message;
    return {
      path: path || (issue.code === 'unrecognized_keys' ? (issue.keys[0] ?? '') : ''),
      message,
    };
  });
  const first = issues[0];
  const where = options.target === 'json' ? 'body' : options.target;
  const field = first?.path || undefined;
  return sendError(c, {
    status: 400,
    body: {
      error: {
        code: 'INVALID_ARGUMENT',
        message: first
          ? `${where}${field ? `.${field}` : ''}: ${first.message}`
          : `${where}: invalid`,
        ...(field ? { field } : {}),
        issues,
      },
    },
  });
}

/** Maps any thrown value to an error answer; unknown errors become a 500 without details. */
export function errorResponse(
  c: Context,
  error: unknown,
  log: (error: unknown) => void,
  // Applied to the whole message of an unexpected error before it is cut: a cut secret would
  // no longer match.
  redact: (text: string) => string = (text) => text,
): Response {
  if (error instanceof ApiError) {
    return sendError(c, {
      status: error.status as ContentfulStatusCode,
      body: {
        error: {
          code: error.publicCode,
          message: error.message,
          ...(error.field ? { field: error.field } : {}),
        },
      },
    });
  }
  if (error instanceof HTTPException) {
    const status = error.status as ContentfulStatusCode;
    if (status === 415) {
      return sendError(c, {
        status,
        body: {
          error: {
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: 'body: send a JSON object with Content-Type: application/json.',
          },
        },
      });
    }
    const message =
      status === 400 && /JSON/i.test(error.message)
        ? 'body: not valid JSON. Send a JSON object with Content-Type: application/json.'
        : error.message || 'Bad request.';
    return sendError(c, {
      status,
      body: { error: { code: status === 400 ? 'INVALID_ARGUMENT' : 'ERROR', message } },
    });
  }
  if (DelegateError.isInstance(error) && STATUS_OF_CODE[error.code] !== undefined) {
    const field = typeof error.details?.field === 'string' ? error.details.field : undefined;
    return sendError(c, {
      status: STATUS_OF_CODE[error.code]!,
      body: { error: { code: error.code, message: error.message, ...(field ? { field } : {}) } },
    });
  }
  log(error);
  return sendError(c, {
    status: 500,
    body: {
      error: {
        code: 'INTERNAL',
        message: `The server failed while handling this request (${redact(errorMessage(error)).slice(0, 200)}). The request id in X-Request-Id finds it in the server log.`,
      },
    },
  });
}
