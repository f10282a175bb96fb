import { DelegateError } from './errors.js';

/**
 * Names the kind of a value for a message: `undefined`, `null`, `an empty string`, `a string of
 * 12 characters`, `an array`, `a number`. A string is never repeated: a value passed in the
 * wrong place may be a secret (an API key given as the client).
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  return `a ${typeof value}`;
}

/** True for a plain object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A DelegateError (INVALID_ARGUMENT) for a public function called with a wrong argument:
 * `<where>: <option> must be <expected>; got <kind>.`, with the option in `details`.
 */
export function invalidArgument(options: {
  /** The function or constructor: `query()`, `new TranscriptStore()`. */
  where: string;
  /** The argument or option: `params.client`. */
  option: string;
  /** What it must be: `a string`. */
  expected: string;
  /** What it was. */
  value: unknown;
}): DelegateError {
  return new DelegateError(
    'INVALID_ARGUMENT',
    `${options.where}: ${options.option} must be ${options.expected}; got ${describeValue(options.value)}.`,
    { details: { option: options.option } },
  );
}

// Cheap checks for exported functions: a typeof or Array.isArray, never a schema parse.

/** Throws `INVALID_ARGUMENT` unless `value` is a plain object (not null, not an array). */
export function checkObject(where: string, option: string, value: unknown): void {
  if (!isObject(value)) throw invalidArgument({ where, option, expected: 'an object', value });
}

/** Like `checkObject`, but `undefined` (left out) passes. */
export function checkOptionalObject(where: string, option: string, value: unknown): void {
  if (value !== undefined) checkObject(where, option, value);
}

/** Throws `INVALID_ARGUMENT` unless `value` is an array. */
export function checkArray(where: string, option: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidArgument({ where, option, expected: 'an array', value });
}

/** Like `checkArray`, but `undefined` (left out) passes. */
export function checkOptionalArray(where: string, option: string, value: unknown): void {
  if (value !== undefined) checkArray(where, option, value);
}

/** Throws `INVALID_ARGUMENT` unless `value` is a string. */
export function checkString(where: string, option: string, value: unknown): void {
  if (typeof value !== 'string') {
    throw invalidArgument({ where, option, expected: 'a string', value });
  }
}
