import { expect } from 'vitest';
import { DelegateError } from '@delegate/core';

/** Awaits a promise that must reject with a DelegateError, and returns that error. */
export async function rejection(promise: Promise<unknown>): Promise<DelegateError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(DelegateError.isInstance(error)).toBe(true);
  return error as DelegateError;
}
