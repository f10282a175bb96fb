/** Every error code Delegate raises. */
export const DelegateErrorCode = {
  /** A value did not match what was expected (bad option, bad input). */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** An agent definition file or value could not be used. */
  INVALID_AGENT_DEFINITION: 'INVALID_AGENT_DEFINITION',
  /** No agent of the requested type exists. */
  AGENT_NOT_FOUND: 'AGENT_NOT_FOUND',
  /** A permission rule denies the requested agent type. */
  AGENT_DENIED: 'AGENT_DENIED',
  /** The calling agent may not spawn the requested type. */
  AGENT_NOT_ALLOWED: 'AGENT_NOT_ALLOWED',
  /** A fork tried to fork again. */
  FORK_IN_FORK: 'FORK_IN_FORK',
  /** An agent needs MCP servers that are not connected. */
  MCP_SERVERS_MISSING: 'MCP_SERVERS_MISSING',
  /** A path would leave the directory it must stay in. */
  PATH_ESCAPE: 'PATH_ESCAPE',
  /** A file changed since it was read, or was never read. */
  FILE_STALE: 'FILE_STALE',
  /** A tool call failed. */
  TOOL_FAILED: 'TOOL_FAILED',
  /** An option would break prompt-cache sharing with the parent. */
  CACHE_UNSAFE: 'CACHE_UNSAFE',
  /** The agent reached its turn limit. */
  MAX_TURNS: 'MAX_TURNS',
  /** The work was aborted. */
  ABORTED: 'ABORTED',
  /** The Messages API answered with an error. */
  API_ERROR: 'API_ERROR',
  /** A configured limit (depth, concurrency, size) was exceeded. */
  LIMIT_EXCEEDED: 'LIMIT_EXCEEDED',
  /** An agent (or the tree above it) used up its token or cost budget. */
  BUDGET_EXCEEDED: 'BUDGET_EXCEEDED',
  /** A response stream stopped sending events too many times in a row. */
  STREAM_STALLED: 'STREAM_STALLED',
  /** A task, agent or file that was asked for does not exist. */
  NOT_FOUND: 'NOT_FOUND',
  /** Reading or writing the file system failed (permissions, disk full, …). */
  FILE_SYSTEM_ERROR: 'FILE_SYSTEM_ERROR',
} as const;
export type DelegateErrorCode = (typeof DelegateErrorCode)[keyof typeof DelegateErrorCode];

const marker = Symbol.for('delegate.error');

/**
 * The base class of every error Delegate throws on purpose. `code` says what kind of
 * failure it is; `cause` keeps the original error. `isInstance` works across copies
 * of this package (it checks a global symbol, not the prototype chain).
 */
export class DelegateError extends Error {
  private readonly [marker] = true;
  /** What kind of failure this is. */
  readonly code: DelegateErrorCode;
  /** Extra structured facts (path, agent name, rule source…). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: DelegateErrorCode,
    message: string,
    options: { cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DelegateError';
    this.code = code;
    this.details = options.details;
  }

  /** True when `value` is a DelegateError from any copy of this package. */
  static isInstance(value: unknown): value is DelegateError {
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as Record<symbol, unknown>)[marker] === true
    );
  }

  /** True when `value` is a DelegateError with the given code. */
  static hasCode(value: unknown, code: DelegateErrorCode): value is DelegateError {
    return DelegateError.isInstance(value) && value.code === code;
  }
}

/** Returns the message of any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

/** True when the value is an abort (an AbortError or a DelegateError with code ABORTED). */
export function isAbortError(error: unknown): boolean {
  if (DelegateError.hasCode(error, 'ABORTED')) return true;
  return (
    error instanceof Error && (error.name === 'AbortError' || error.name === 'APIUserAbortError')
  );
}
