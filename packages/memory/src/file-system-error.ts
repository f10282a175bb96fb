import { DelegateError, errorMessage } from '@delegate/core';
import { showDescriptorPaths } from './proc-descriptors.js';

/** The code used for file-system failures. */
const FILE_SYSTEM_ERROR_CODE = 'FILE_SYSTEM_ERROR';

/** Returns the Node error code (`ENOENT`, `EACCES`…) of a thrown value, if any. */
export function systemErrorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** Wraps a file-system failure in a DelegateError that names the action, the path and a next step. */
export function fileSystemError(options: {
  action: string;
  path: string;
  cause: unknown;
  details?: Record<string, unknown>;
}): DelegateError {
  const code = systemErrorCode(options.cause);
  return new DelegateError(
    FILE_SYSTEM_ERROR_CODE,
    `Could not ${options.action} "${options.path}": ${showDescriptorPaths(errorMessage(options.cause))}. ` +
      'Check that the path is a writable folder (not a file) and that you have permission.',
    {
      cause: options.cause,
      details: { path: options.path, systemCode: code, ...options.details },
    },
  );
}
