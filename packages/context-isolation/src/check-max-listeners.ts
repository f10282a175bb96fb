import { DelegateError } from '@delegate/core';

/** Returns `value` when it is a valid listener limit, else throws naming the option and its caller. */
export function checkMaxListeners(value: number, where: string): number {
  if (Number.isInteger(value) && value >= 0) return value;
  throw new DelegateError(
    'INVALID_ARGUMENT',
    `${where} must be a non-negative integer, got ${String(value)}. Pass a count such as 50, or 0 for no limit.`,
    { details: { option: where, value } },
  );
}
