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
