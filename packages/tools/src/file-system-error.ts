import { DelegateError, type DelegateErrorCode, errorMessage } from '@delegate/core';

/** The Node error code (`ENOENT`, `ENOTDIR`, …) of a thrown value, if it has one. */
export function systemErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}

const explanations: Record<string, { code: DelegateErrorCode; text: string }> = {
  ENOENT: { code: 'NOT_FOUND', text: 'does not exist' },
  ENOTDIR: {
    code: 'INVALID_ARGUMENT',
    text: 'goes through a file as if it were a directory (a part of the path is a file)',
  },
  EISDIR: { code: 'INVALID_ARGUMENT', text: 'is a directory, not a file' },
  ENAMETOOLONG: { code: 'INVALID_ARGUMENT', text: 'is too long for the file system' },
  ELOOP: { code: 'INVALID_ARGUMENT', text: 'runs into a loop of symbolic links' },
  EEXIST: { code: 'FILE_STALE', text: 'already exists' },
  ENOTEMPTY: { code: 'FILE_SYSTEM_ERROR', text: 'is a directory that is not empty' },
  EACCES: { code: 'FILE_SYSTEM_ERROR', text: 'is not accessible (permission denied)' },
  EPERM: { code: 'FILE_SYSTEM_ERROR', text: 'may not be changed (operation not permitted)' },
  EROFS: { code: 'FILE_SYSTEM_ERROR', text: 'is on a read-only file system' },
  ENOSPC: { code: 'FILE_SYSTEM_ERROR', text: 'cannot be written: the disk is full' },
  EDQUOT: { code: 'FILE_SYSTEM_ERROR', text: 'cannot be written: the disk quota is used up' },
  EMFILE: { code: 'FILE_SYSTEM_ERROR', text: 'cannot be opened: too many open files' },
  ENFILE: { code: 'FILE_SYSTEM_ERROR', text: 'cannot be opened: too many open files' },
  EBUSY: { code: 'FILE_SYSTEM_ERROR', text: 'is busy' },
  EIO: { code: 'FILE_SYSTEM_ERROR', text: 'could not be read or written (input/output error)' },
  EFBIG: { code: 'LIMIT_EXCEEDED', text: 'would become larger than the file system allows' },
};

/**
 * Turns a file-system failure (an error with an errno code such as `ENOTDIR` or
 * `ENAMETOOLONG`) into a DelegateError that names the path, says what went wrong and
 * keeps the system code in `details.systemCode`. Other values are returned unchanged.
 */
export function toFileSystemError(error: unknown, path: string): unknown {
  if (DelegateError.isInstance(error)) return error;
  const systemCode = systemErrorCode(error);
  if (systemCode === undefined) return error;
  const known = explanations[systemCode];
  const what = known?.text ?? `could not be used (${errorMessage(error)})`;
  return new DelegateError(
    known?.code ?? 'FILE_SYSTEM_ERROR',
    `${path} ${what}. Check the path and try again with one that exists and is allowed.`,
    { cause: error, details: { path, systemCode } },
  );
}

/** Runs a file tool's work and turns a raw file-system error from it into a DelegateError naming `path`. */
export async function withFileSystemErrors<Result>(
  path: string,
  work: () => Promise<Result>,
): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    throw toFileSystemError(error, path);
  }
}

/** True when a DelegateError made by `toFileSystemError` (or a raw error) has this system code. */
export function hasSystemCode(error: unknown, systemCode: string): boolean {
  if (systemErrorCode(error) === systemCode) return true;
  const details = DelegateError.isInstance(error)
    ? (error.details as Record<string, unknown> | undefined)
    : undefined;
  return details?.['systemCode'] === systemCode;
}
