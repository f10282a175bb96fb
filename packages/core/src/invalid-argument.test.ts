import { describe, expect, it } from 'vitest';
import { DelegateError } from './errors.js';
import { describeValue, invalidArgument, isObject } from './invalid-argument.js';

describe('invalidArgument', () => {
  it('names where, the option and what it must be, and keeps the option in details', () => {
    const secret = 'sk-ant-1234567890';
    const error = invalidArgument({
      where: 'query()',
      option: 'params.client',
      expected: 'an Anthropic SDK client',
      value: secret,
    });
    expect(DelegateError.hasCode(error, 'INVALID_ARGUMENT')).toBe(true);
    expect(error.message).toBe(
      'query(): params.client must be an Anthropic SDK client; got a string of 17 characters.',
    );
    expect(error.details).toEqual({ option: 'params.client' });
    expect(error.message).not.toContain(secret);
  });
});

describe('describeValue', () => {
  it('names the kind of a value and never repeats a string', () => {
    expect(
      [undefined, null, '', 'a secret', [], {}, 3, true, () => 0].map((value) =>
        describeValue(value),
      ),
    ).toEqual([
      'undefined',
      'null',
      'an empty string',
      'a string of 8 characters',
      'an array',
      'an object',
      'a number',
      'a boolean',
      'a function',
    ]);
  });
});

describe('isObject', () => {
  it('is true for a plain object only', () => {
    expect([{}, { a: 1 }, [], null, undefined, 'x', 1].map((value) => isObject(value))).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
