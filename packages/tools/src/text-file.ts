import { constants } from 'node:buffer';
import { createHash } from 'node:crypto';
import { DelegateError } from '@delegate/core';

const decoder = new TextDecoder('utf-8', { fatal: true });

const MAX_STRING_LENGTH = constants.MAX_STRING_LENGTH;

/** Returns the SHA-256 hex digest of a file's bytes or text. */
export function hashContent(content: Buffer | string): string {
  return createHash('sha256').update(content).digest('hex');
}

/** True when the bytes contain a NUL byte in their first `sampleBytes` (the usual binary test). */
export function hasNulByte(bytes: Buffer, sampleBytes = 8000): boolean {
  const end = Math.min(bytes.length, sampleBytes);
  return bytes.subarray(0, end).includes(0);
}

/**
 * Decodes UTF-8 text, refusing binary content (NUL bytes or invalid UTF-8) with an
 * INVALID_ARGUMENT error that names the file, and text too long for one JavaScript string with
 * LIMIT_EXCEEDED.
 */
export function decodeTextFile(bytes: Buffer, path: string): string {
  if (hasNulByte(bytes, bytes.length)) {
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${path} looks like a binary file (it contains NUL bytes); only UTF-8 text files can be read.`,
      { details: { path } },
    );
  }
  try {
    const text = decoder.decode(bytes);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch (error) {
    // V8 cannot hold the text in one string: the file is too large, not binary.
    if (
      (error as { code?: unknown }).code === 'ERR_STRING_TOO_LONG' ||
      error instanceof RangeError
    ) {
      throw new DelegateError(
        'LIMIT_EXCEEDED',
        `${path} is too large to handle as one text (${bytes.length} bytes, more than the ` +
          `${MAX_STRING_LENGTH} characters a JavaScript string can hold). Read a range of it with offset and limit.`,
        { cause: error, details: { path, size: bytes.length, maxCharacters: MAX_STRING_LENGTH } },
      );
    }
    throw new DelegateError(
      'INVALID_ARGUMENT',
      `${path} is not valid UTF-8 text (probably a binary file); only UTF-8 text files can be read.`,
      { cause: error, details: { path } },
    );
  }
}
